// What a GET or HEAD for a regular file is answered with, from the request's headers
// and the file's size and modification time alone (no I/O): the status, the
// validators, and the byte range the body covers. RFC 9110 section 13 (conditional
// requests: If-Match, If-Unmodified-Since, If-None-Match, If-Modified-Since) and
// section 14 (Range, If-Range, Content-Range), with the choices the server made
// when @fastify/send answered these (its behaviour is kept, tested in
// test/file-head.test.ts):
//   - weak ETags `W/"<size hex>-<mtime ms hex>"` (size and time do not prove the
//     bytes are the same), compared weakly for If-None-Match and strongly, as RFC
//     9110 requires, for If-Match and If-Range, where a weak tag therefore never
//     matches (13.1.1, 13.1.5);
//   - a request with `Cache-Control: no-cache` is never answered 304;
//   - several ranges are merged where they overlap or touch; one range left is a
//     206, several are answered with the whole file (no multipart responses);
//   - If-Range is an entity tag (it has a quote) or an HTTP date.
// The caller stats the file (synchronously, with the checks of static-files.ts):
// an asynchronous stat here would cost a thread-pool round trip per request.
import type { IncomingHttpHeaders } from 'node:http';
import { createRequire } from 'node:module';

/** The file's type from its name (the `mime` package's table), or null: no Content-Type. */
const mime = createRequire(import.meta.url)('mime') as { getType(path: string): string | null };

export interface FileFacts {
  /** The file's name or path (its extension picks the Content-Type). */
  path: string;
  sizeBytes: number;
  modified: Date;
}

export type FileHead =
  /** 200 or 206: send `lengthBytes` from `offsetBytes` (HEAD: none, the headers are the same). */
  | { kind: 'body'; statusCode: 200 | 206; headers: Record<string, string>; offsetBytes: number; lengthBytes: number }
  /** 304: the client's copy is current; validators only. */
  | { kind: 'not-modified'; statusCode: 304; headers: Record<string, string> }
  /** 412 (a precondition failed) or 416 (no requested range overlaps the file; `headers` has Content-Range). */
  | { kind: 'refused'; statusCode: 412 | 416; headers: Record<string, string> };

/** The header as one string (Node joins most repeated headers already), or undefined. */
function one(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

const EDGE_SPACES = /^ +| +$/g;

/** Members of a comma-separated list, without the spaces around them, empty ones skipped. */
function listMembers(text: string): string[] {
  return text
    .split(',')
    .map((member) => member.replace(EDGE_SPACES, ''))
    .filter((member) => member !== '');
}

/** Weak comparison (RFC 9110 8.8.3.2), where our ETag is always weak: `"x"` and `W/"x"` both match it. */
function etagListMatches(list: string, etag: string): boolean {
  return listMembers(list).some((tag) => tag === etag || `W/${tag}` === etag);
}

/**
 * Strong comparison (RFC 9110 8.8.3.2): both tags strong and equal. Our ETag is weak,
 * so this holds for no tag; written out so that a strong ETag, if the server ever
 * makes one, is compared as the RFC says.
 */
function etagListMatchesStrongly(list: string, etag: string): boolean {
  return !etag.startsWith('W/') && listMembers(list).some((tag) => tag === etag);
}

/** HTTP date in ms, or NaN. */
const dateMs = (text: string | undefined): number => (text === undefined ? NaN : Date.parse(text));

function preconditionFailed(headers: IncomingHttpHeaders, etag: string, lastModified: string): boolean {
  const ifMatch = one(headers, 'if-match');
  if (ifMatch && ifMatch !== '*' && !etagListMatchesStrongly(ifMatch, etag)) return true;
  const unmodifiedSinceMs = dateMs(one(headers, 'if-unmodified-since'));
  // An unparseable date is ignored; an unparseable Last-Modified fails the condition.
  if (!Number.isNaN(unmodifiedSinceMs)) {
    const modifiedMs = dateMs(lastModified);
    if (Number.isNaN(modifiedMs) || modifiedMs > unmodifiedSinceMs) return true;
  }
  return false;
}

function notModified(headers: IncomingHttpHeaders, etag: string, lastModified: string): boolean {
  // An end-to-end reload asks for the representation itself.
  if (one(headers, 'cache-control')?.includes('no-cache')) return false;
  const ifNoneMatch = one(headers, 'if-none-match');
  if (ifNoneMatch !== undefined) {
    // RFC 9110 13.1.3: with If-None-Match present, If-Modified-Since is not evaluated.
    return ifNoneMatch === '*' || etagListMatches(ifNoneMatch, etag);
  }
  const modifiedSinceMs = dateMs(one(headers, 'if-modified-since'));
  return dateMs(lastModified) <= modifiedSinceMs;
}

/** Whether a Range may be honoured: no If-Range, or one that still names this file. */
function rangeStillValid(headers: IncomingHttpHeaders, etag: string, lastModified: string): boolean {
  const ifRange = one(headers, 'if-range');
  if (ifRange === undefined) return true;
  if (ifRange.includes('"')) return etagListMatchesStrongly(ifRange, etag);
  const ifRangeMs = dateMs(ifRange);
  if (Number.isNaN(ifRangeMs)) return false;
  const modifiedMs = dateMs(lastModified);
  return Number.isNaN(modifiedMs) || modifiedMs <= ifRangeMs;
}

interface ByteRange {
  first: number;
  last: number;
  /** Position in the request, to keep its order after merging. */
  order: number;
}

/**
 * The ranges of a `bytes=` header that overlap a file of `sizeBytes`, clipped to it,
 * merged where they overlap or touch, in the order they were asked for. Specs that
 * do not parse or lie wholly outside the file are dropped.
 */
export function satisfiableRanges(sizeBytes: number, header: string): ByteRange[] {
  const specs = header.slice(header.indexOf('=') + 1).split(',');
  const ranges: ByteRange[] = [];
  for (const spec of specs) {
    const dash = spec.indexOf('-');
    const firstText = spec.slice(0, dash).trim();
    const lastText = spec.slice(dash + 1).trim();
    let first = firstText === '' ? NaN : Number.parseInt(firstText, 10);
    let last = lastText === '' ? NaN : Number.parseInt(lastText, 10);
    if (dash === -1) continue;
    if (Number.isNaN(first)) {
      // A suffix: the last N bytes, all of them when N is the size or more (RFC 9110 14.1.2); -0 asks for none.
      if (last === 0) continue;
      first = Math.max(0, sizeBytes - last);
      last = sizeBytes - 1;
    } else if (Number.isNaN(last) || last > sizeBytes - 1) last = sizeBytes - 1;
    if (Number.isNaN(first) || Number.isNaN(last) || first < 0 || first > last) continue;
    ranges.push({ first, last, order: ranges.length });
  }
  if (ranges.length < 2) return ranges;
  const byStart = [...ranges].sort((a, b) => a.first - b.first);
  const merged: ByteRange[] = [byStart[0]!];
  for (const range of byStart.slice(1)) {
    const current = merged.at(-1)!;
    if (range.first > current.last + 1) merged.push(range);
    else {
      current.last = Math.max(current.last, range.last);
      current.order = Math.min(current.order, range.order);
    }
  }
  return merged.sort((a, b) => a.order - b.order);
}

const BYTES_UNIT = /^ *bytes=/;

/** The validators every answer carries (a 304 carries these alone). */
function validators(file: FileFacts): { etag: string; lastModified: string } {
  return {
    etag: `W/"${file.sizeBytes.toString(16)}-${file.modified.getTime().toString(16)}"`,
    lastModified: file.modified.toUTCString(),
  };
}

/** Content-Type from the file name; text and JSON types say their charset. */
function contentType(path: string): string | null {
  const type = mime.getType(path);
  if (type === null) return null;
  const textual = type.startsWith('text/') || type.startsWith('application/json') || type.startsWith('application/javascript');
  return textual ? `${type}; charset=utf-8` : type;
}

/** How to answer a GET or HEAD for `file` (the Range header, if any, already canonical: range.ts). */
export function fileHead(headers: IncomingHttpHeaders, file: FileFacts): FileHead {
  const { etag, lastModified } = validators(file);
  const out: Record<string, string> = { 'Accept-Ranges': 'bytes', 'Last-Modified': lastModified, ETag: etag };
  if (headers['if-match'] || headers['if-unmodified-since'] || headers['if-none-match'] || headers['if-modified-since']) {
    if (preconditionFailed(headers, etag, lastModified)) return { kind: 'refused', statusCode: 412, headers: {} };
    if (notModified(headers, etag, lastModified)) return { kind: 'not-modified', statusCode: 304, headers: out };
  }
  const type = contentType(file.path);
  if (type !== null) out['Content-Type'] = type;
  const range = one(headers, 'range');
  if (range !== undefined && BYTES_UNIT.test(range) && rangeStillValid(headers, etag, lastModified)) {
    const ranges = satisfiableRanges(file.sizeBytes, range);
    if (ranges.length === 0) return { kind: 'refused', statusCode: 416, headers: { 'Content-Range': `bytes */${file.sizeBytes}` } };
    if (ranges.length === 1) {
      const { first, last } = ranges[0]!;
      out['Content-Range'] = `bytes ${first}-${last}/${file.sizeBytes}`;
      out['Content-Length'] = String(last - first + 1);
      return { kind: 'body', statusCode: 206, headers: out, offsetBytes: first, lengthBytes: last - first + 1 };
    }
  }
  out['Content-Length'] = String(file.sizeBytes);
  return { kind: 'body', statusCode: 200, headers: out, offsetBytes: 0, lengthBytes: file.sizeBytes };
}
