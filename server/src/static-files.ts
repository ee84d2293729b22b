// Files from a folder through @fastify/send (the engine of @fastify/static): Range,
// If-Range, ETag, Last-Modified and conditional requests. Used directly because
// @fastify/static requires an ES-module-only package that jest 29 cannot load.
import send from '@fastify/send';
import type { FastifyReply, FastifyRequest } from 'fastify';

const SEND_OPTIONS = {
  dotfiles: 'deny',
  index: false,
  etag: true,
  lastModified: true,
  acceptRanges: true,
  cacheControl: false,
  // Fewer, larger reads: a 2 s segment is 0.1-2 MB; the 64 KB default costs a
  // thread-pool round trip and a socket write per 64 KB.
  highWaterMark: 512 * 1024,
} as const;

/**
 * Replies with the file at `urlPath` (still percent-encoded, as in the URL) under
 * `root`; `headers` adds the caller's headers to a file reply. Directories and
 * missing files go to the not-found handler.
 */
export async function sendFromDir(
  request: FastifyRequest,
  reply: FastifyReply,
  root: string,
  urlPath: string,
  headers: (reply: FastifyReply, filePath: string) => void,
): Promise<FastifyReply> {
  if (urlPath.endsWith('/')) {
    reply.callNotFound();
    return reply;
  }
  const result = await send(request.raw, urlPath, { ...SEND_OPTIONS, root });
  if (result.type === 'directory' || (result.type === 'error' && result.statusCode === 404)) {
    result.stream.destroy();
    reply.callNotFound();
    return reply;
  }
  reply.code(result.statusCode).headers(result.headers);
  if (result.type === 'file') headers(reply, result.metadata.path);
  return reply.send(result.stream);
}

/** The part of a request URL after `prefix` and before the query, as sent. */
export function pathAfter(url: string, prefix: string): string {
  const end = url.search(/[?#]/);
  return '/' + (end === -1 ? url : url.slice(0, end)).slice(prefix.length);
}
