// Files from a folder through @fastify/send (the engine of @fastify/static): Range,
// If-Range, ETag, Last-Modified and conditional requests. Used directly because
// @fastify/static requires an ES-module-only package that jest 29 cannot load.
//
// Before send opens anything, the server resolves the path itself: a file is served
// only if its real path (after every symlink) lies inside the folder's real path and
// it is a regular file. Opening a FIFO or a device would block one of libuv's four
// file threads until a writer appears; a few such requests would stall every file
// read of the process, so non-regular files are refused before they are opened.
import send from '@fastify/send';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { closeSync, constants, fstatSync, openSync, realpathSync, statSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { relative, sep } from 'node:path';
import { errorResponseBody } from './errors.js';
import { FileBody } from './file-body.js';
import type { ServerMetrics } from './metrics.js';
import { canonicalBytesRange } from './range.js';

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

/** What a URL path names under a folder, decided before anything is opened. */
export type ResolvedPath =
  | { kind: 'file'; realRoot: string; realPath: string }
  | { kind: 'missing' }
  | { kind: 'directory' }
  /** Exists, but is not served: `reason` goes to the log, never to the client. */
  | { kind: 'refused'; reason: string };

function errnoOf(err: unknown): string {
  return (err as NodeJS.ErrnoException | null)?.code ?? 'unknown';
}

/** How long a served folder's real path is reused before it is resolved again. */
const REAL_ROOT_TTL_MS = 1000;
const realRoots = new Map<string, { realRoot: string | null; resolvedAtMs: number }>();

/** The folder's real path (null while it does not exist: the player folder until the page is built). */
function realRootOf(root: string): string | null {
  const nowMs = performance.now();
  const cached = realRoots.get(root);
  if (cached !== undefined && nowMs - cached.resolvedAtMs < REAL_ROOT_TTL_MS) return cached.realRoot;
  let realRoot: string | null;
  try {
    realRoot = realpathSync.native(root);
  } catch {
    realRoot = null;
  }
  realRoots.set(root, { realRoot, resolvedAtMs: nowMs });
  return realRoot;
}

/**
 * Resolves `urlPath` (percent-encoded, as in the URL, already checked for dot
 * segments and bad escapes by the onRequest hook) under `root`.
 *
 * The calls are synchronous: on a local file system they are cache hits of a few
 * microseconds, while each asynchronous call costs two thread switches (tens of
 * microseconds of CPU on a virtual machine, more than the call itself). None of
 * them opens the file, so a FIFO cannot block here. The served folder's own real
 * path is reused for a second (a folder swapped for another is seen within it).
 */
export function resolveUnder(root: string, urlPath: string): ResolvedPath {
  let decoded: string;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return { kind: 'missing' };
  }
  const realRoot = realRootOf(root);
  if (realRoot === null) return { kind: 'missing' };
  let realPath: string;
  try {
    realPath = realpathSync.native(realRoot + decoded);
  } catch (err) {
    const code = errnoOf(err);
    if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'ENAMETOOLONG') return { kind: 'missing' };
    if (code === 'ELOOP') return { kind: 'refused', reason: 'symlink loop' };
    return { kind: 'refused', reason: `path unresolvable (${code})` };
  }
  if (realPath !== realRoot && !realPath.startsWith(realRoot + sep)) {
    return { kind: 'refused', reason: 'resolves outside the served folder' };
  }
  let stats;
  try {
    stats = statSync(realPath);
  } catch (err) {
    return { kind: 'refused', reason: `unreadable (${errnoOf(err)})` };
  }
  if (stats.isDirectory()) return { kind: 'directory' };
  if (!stats.isFile()) return { kind: 'refused', reason: 'not a regular file' };
  return { kind: 'file', realRoot, realPath };
}

/** The URL path send expects (percent-encoded, from the root) for a real path below `realRoot`. */
function urlPathOf(realRoot: string, realPath: string): string {
  return '/' + relative(realRoot, realPath).split(sep).map(encodeURIComponent).join('/');
}

export interface SendFromDirOptions {
  root: string;
  /** Still percent-encoded, as in the URL. */
  urlPath: string;
  /** Adds the caller's headers to a file reply. */
  headers: (reply: FastifyReply, filePath: string) => void;
  metrics: ServerMetrics;
  /** A GET's body goes out by sendfile: the reply carries a FileBody instead of a read stream. */
  zeroCopy?: boolean;
}

/**
 * Opening a file that was swapped for a FIFO since the checks would block; these
 * flags make open return at once, and fstat then refuses anything but a regular file.
 */
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW;

/** The body bytes a 200 or 206 from send stands for: its Content-Range, or the whole Content-Length. */
function bodyRange(statusCode: number, headers: Record<string, string | number>): { offsetBytes: number; lengthBytes: number } | null {
  const lengthBytes = Number(headers['Content-Length']);
  if ((statusCode !== 200 && statusCode !== 206) || !Number.isSafeInteger(lengthBytes) || lengthBytes < 0) return null;
  if (statusCode === 200) return { offsetBytes: 0, lengthBytes };
  const m = /^bytes (\d+)-(\d+)\//.exec(String(headers['Content-Range'] ?? ''));
  return m === null ? null : { offsetBytes: Number(m[1]), lengthBytes };
}

/** Opens the file for the zero-copy path; a reason instead when it is no longer a regular file. */
function openFileBody(path: string, offsetBytes: number, lengthBytes: number): FileBody | { refused: string } {
  let fd: number;
  try {
    fd = openSync(path, OPEN_FLAGS);
  } catch (err) {
    return { refused: `cannot open (${errnoOf(err)})` };
  }
  try {
    if (!fstatSync(fd).isFile()) {
      closeSync(fd);
      return { refused: 'not a regular file' };
    }
  } catch (err) {
    closeSync(fd);
    return { refused: `cannot stat (${errnoOf(err)})` };
  }
  return new FileBody(fd, offsetBytes, lengthBytes);
}

/**
 * Replies with the file at `urlPath` under `root`. Missing files, folders and
 * refused paths go to the not-found handler (refusals logged and counted); send's
 * own errors (403, 412, 416, 500) are answered in the server's one error shape.
 */
export async function sendFromDir(request: FastifyRequest, reply: FastifyReply, o: SendFromDirOptions): Promise<FastifyReply> {
  if (o.urlPath.endsWith('/')) return notFound(reply);
  const resolved = resolveUnder(o.root, o.urlPath);
  if (resolved.kind === 'refused') {
    o.metrics.errors.inc({ kind: 'refused_file' });
    request.log.warn({ reason: resolved.reason, path: o.urlPath.slice(0, 200) }, 'refused file');
    return notFound(reply);
  }
  if (resolved.kind !== 'file') return notFound(reply);

  const range = request.raw.headers.range;
  if (range !== undefined) {
    const canonical = canonicalBytesRange(range);
    if (canonical === null) delete request.raw.headers.range;
    else request.raw.headers.range = canonical;
  }
  // For the zero-copy path send is asked for the response head only (a HEAD), so it
  // does not open a read stream the body would not use; the status, Range and
  // conditional answers are the same as for the GET.
  const zeroCopy = o.zeroCopy === true && request.method === 'GET';
  const asked = zeroCopy ? ({ method: 'HEAD', headers: request.raw.headers } as IncomingMessage) : request.raw;
  const result = await send(asked, urlPathOf(resolved.realRoot, resolved.realPath), { ...SEND_OPTIONS, root: resolved.realRoot });
  if (result.type === 'directory' || (result.type === 'error' && result.statusCode === 404)) {
    result.stream.destroy();
    return notFound(reply);
  }
  if (result.type === 'error') {
    result.stream.destroy();
    const error = (result.metadata as { error?: Error }).error;
    if (result.statusCode >= 500) {
      o.metrics.errors.inc({ kind: 'server' });
      request.log.error({ err: error, path: o.urlPath.slice(0, 200) }, 'request failed');
    }
    const contentRange = result.headers['Content-Range'];
    if (contentRange !== undefined) reply.header('content-range', contentRange);
    return reply.code(result.statusCode).send(errorResponseBody(result.statusCode));
  }
  const bodyBytes = zeroCopy && result.type === 'file' ? bodyRange(result.statusCode, result.headers) : null;
  if (bodyBytes !== null) {
    result.stream.destroy();
    const body = openFileBody(resolved.realPath, bodyBytes.offsetBytes, bodyBytes.lengthBytes);
    if (!(body instanceof FileBody)) {
      o.metrics.errors.inc({ kind: 'refused_file' });
      request.log.warn({ reason: body.refused, path: o.urlPath.slice(0, 200) }, 'refused file');
      return notFound(reply);
    }
    reply.code(result.statusCode).headers(result.headers);
    o.headers(reply, result.metadata.path);
    return reply.send(body);
  }
  reply.code(result.statusCode).headers(result.headers);
  if (result.type === 'file') o.headers(reply, result.metadata.path);
  return reply.send(result.stream);
}

function notFound(reply: FastifyReply): FastifyReply {
  reply.callNotFound();
  return reply;
}

/** The part of a request URL after `prefix` and before the query, as sent. */
export function pathAfter(url: string, prefix: string): string {
  const end = url.search(/[?#]/);
  return '/' + (end === -1 ? url : url.slice(0, end)).slice(prefix.length);
}
