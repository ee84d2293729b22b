// Files from a folder: the path checks, then the answer (file-head.ts: Range,
// If-Range, ETag, Last-Modified and conditional requests) from the file's own stat,
// then the body as a read stream or, for the zero-copy path, a FileBody.
//
// Before anything is opened, the server resolves the path itself: a file is served
// only if its real path (after every symlink) lies inside the folder's real path and
// it is a regular file. Opening a FIFO or a device would block one of libuv's four
// file threads until a writer appears; a few such requests would stall every file
// read of the process, so non-regular files are refused before they are opened.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { closeSync, constants, createReadStream, fstatSync, openSync, realpathSync, statSync, type Stats } from 'node:fs';
import { relative, sep } from 'node:path';
import { Readable } from 'node:stream';
import { errorResponseBody } from './errors.js';
import { FileBody } from './file-body.js';
import { fileHead } from './file-head.js';
import type { ServerMetrics } from './metrics.js';
import { canonicalBytesRange } from './range.js';

/**
 * Fewer, larger reads for a streamed body: a 2 s segment is 0.1-2 MB; Node's 64 KB
 * default costs a thread-pool round trip and a socket write per 64 KB.
 */
const STREAM_READ_BYTES = 512 * 1024;

/** What a URL path names under a folder, decided before anything is opened. */
export type ResolvedPath =
  | { kind: 'file'; realRoot: string; realPath: string; stats: Stats }
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
  return { kind: 'file', realRoot, realPath, stats };
}

/** A name below the folder that starts with a dot (the real path's, after symlinks): not served. */
function isDotPath(realRoot: string, realPath: string): boolean {
  return relative(realRoot, realPath)
    .split(sep)
    .some((part) => part.startsWith('.'));
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

/**
 * Opens the file a body is sent from, on either path: a descriptor of a regular file,
 * or a reason when what is at the path now is something else (a FIFO swapped in since
 * the checks would otherwise block a thread for good).
 */
export function openRegularFile(path: string): { fd: number } | { refused: string } {
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
  return { fd };
}

/**
 * Replies with the file at `urlPath` under `root`. Missing files, folders and
 * refused paths go to the not-found handler (refusals logged and counted); dotfiles,
 * failed preconditions and unsatisfiable ranges (403, 412, 416) are answered in the
 * server's one error shape.
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
  if (isDotPath(resolved.realRoot, resolved.realPath)) return reply.code(403).send(errorResponseBody(403));

  const range = request.raw.headers.range;
  if (range !== undefined) {
    const canonical = canonicalBytesRange(range);
    if (canonical === null) delete request.raw.headers.range;
    else request.raw.headers.range = canonical;
  }
  const { realPath, stats } = resolved;
  const head = fileHead(request.raw.headers, { path: realPath, sizeBytes: stats.size, modified: stats.mtime });
  if (head.kind === 'refused') {
    const contentRange = head.headers['Content-Range'];
    if (contentRange !== undefined) reply.header('content-range', contentRange);
    return reply.code(head.statusCode).send(errorResponseBody(head.statusCode));
  }
  // A body is read from the descriptor opened here, on either path: never from the path again.
  const opened = head.kind === 'body' && request.method === 'GET' ? openRegularFile(realPath) : null;
  if (opened !== null && 'refused' in opened) {
    o.metrics.errors.inc({ kind: 'refused_file' });
    request.log.warn({ reason: opened.refused, path: o.urlPath.slice(0, 200) }, 'refused file');
    return notFound(reply);
  }
  reply.code(head.statusCode).headers(head.headers);
  o.headers(reply, realPath);
  if (opened === null || head.kind !== 'body') return reply.send(Readable.from(''));
  if (o.zeroCopy === true) return reply.send(new FileBody(opened.fd, head.offsetBytes, head.lengthBytes));
  const end = Math.max(head.offsetBytes, head.offsetBytes + head.lengthBytes - 1);
  return reply.send(createReadStream('', { fd: opened.fd, autoClose: true, highWaterMark: STREAM_READ_BYTES, start: head.offsetBytes, end }));
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
