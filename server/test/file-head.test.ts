// fileHead(): the answer to a GET or HEAD for a file from its headers and the file's
// size and modification time (RFC 9110 sections 13 and 14, with the server's choices
// listed in src/file-head.ts). The same answers reach clients through real sockets in
// media.test.ts and hostile/files.test.ts.
import { fileHead, satisfiableRanges, type FileFacts } from '../src/file-head.js';

const MODIFIED = new Date('2026-11-23T10:00:00.123Z');
const FILE: FileFacts = { path: '/media/seg.m4s', sizeBytes: 1000, modified: MODIFIED };
const ETAG = `W/"3e8-${MODIFIED.getTime().toString(16)}"`;
const STRONG = ETAG.slice(2);
const LAST_MODIFIED = 'Mon, 23 Nov 2026 10:00:00 GMT';
const BEFORE = 'Mon, 23 Nov 2026 09:59:59 GMT';
const AFTER = 'Mon, 23 Nov 2026 10:00:01 GMT';

describe('fileHead', () => {
  test('a plain GET: 200, the whole file, weak ETag, Last-Modified, the type from the name', () => {
    expect(fileHead({}, FILE)).toEqual({
      kind: 'body',
      statusCode: 200,
      offsetBytes: 0,
      lengthBytes: 1000,
      headers: { 'Accept-Ranges': 'bytes', 'Last-Modified': LAST_MODIFIED, ETag: ETAG, 'Content-Type': 'video/iso.segment', 'Content-Length': '1000' },
    });
  });

  test('text and JSON say their charset; an unknown extension has no Content-Type', () => {
    expect(fileHead({}, { ...FILE, path: 'a.json' }).headers['Content-Type']).toBe('application/json; charset=utf-8');
    expect(fileHead({}, { ...FILE, path: 'a.html' }).headers['Content-Type']).toBe('text/html; charset=utf-8');
    expect(fileHead({}, { ...FILE, path: 'a.js' }).headers['Content-Type']).toBe('application/javascript; charset=utf-8');
    expect(fileHead({}, { ...FILE, path: 'a.nosuchtype' }).headers['Content-Type']).toBeUndefined();
  });

  test.each([
    ['If-None-Match with the ETag', { 'if-none-match': ETAG }],
    ['If-None-Match with the strong form, in a list', { 'if-none-match': `"other" , ${STRONG}` }],
    ['If-None-Match: *', { 'if-none-match': '*' }],
    ['If-Modified-Since at Last-Modified', { 'if-modified-since': LAST_MODIFIED }],
    ['If-Modified-Since after it', { 'if-modified-since': AFTER }],
  ])('304 for %s, with the validators only', (_what, headers) => {
    expect(fileHead(headers, FILE)).toEqual({
      kind: 'not-modified',
      statusCode: 304,
      headers: { 'Accept-Ranges': 'bytes', 'Last-Modified': LAST_MODIFIED, ETag: ETAG },
    });
  });

  test.each([
    ['another ETag', { 'if-none-match': '"other"' }],
    ['If-Modified-Since before Last-Modified', { 'if-modified-since': BEFORE }],
    ['an unparseable date', { 'if-modified-since': 'yesterday' }],
    ['Cache-Control: no-cache (a reload)', { 'if-none-match': ETAG, 'cache-control': 'no-cache' }],
    ['If-None-Match present: If-Modified-Since is not looked at', { 'if-none-match': '"other"', 'if-modified-since': AFTER }],
  ])('the body (200) for %s', (_what, headers) => {
    expect(fileHead(headers, FILE)).toMatchObject({ kind: 'body', statusCode: 200 });
  });

  test.each([
    ['If-Match with another ETag', { 'if-match': '"other"' }],
    // RFC 9110 13.1.1: If-Match compares strongly, and a weak ETag matches nothing strongly.
    ['If-Match with our (weak) ETag', { 'if-match': ETAG }],
    ['If-Match with its strong form', { 'if-match': `"x", ${STRONG}` }],
    ['If-Unmodified-Since before Last-Modified', { 'if-unmodified-since': BEFORE }],
  ])('412 for %s', (_what, headers) => {
    expect(fileHead(headers, FILE)).toEqual({ kind: 'refused', statusCode: 412, headers: {} });
  });

  test.each([
    ['If-Match: *', { 'if-match': '*' }],
    ['If-Unmodified-Since at Last-Modified', { 'if-unmodified-since': LAST_MODIFIED }],
    ['an unparseable If-Unmodified-Since (ignored)', { 'if-unmodified-since': 'soon' }],
  ])('preconditions that hold: %s', (_what, headers) => {
    expect(fileHead(headers, FILE).statusCode).toBe(200);
  });

  test.each([
    ['bytes=0-0', 0, 0],
    ['bytes=990-', 990, 999],
    ['bytes=990-5000', 990, 999],
    ['bytes=-10', 990, 999],
    // A suffix at least as long as the file is the whole file (RFC 9110 14.1.2).
    ['bytes=-1000', 0, 999],
    ['bytes=-2000', 0, 999],
    // Overlapping or touching ranges merge; one range left is a 206.
    ['bytes=0-10,5-20', 0, 20],
    ['bytes=0-10,11-20', 0, 20],
    // Specs outside the file are dropped when another one fits.
    ['bytes=2000-3000,0-5', 0, 5],
  ])('Range %s: 206 with bytes %i-%i', (range, first, last) => {
    const head = fileHead({ range }, FILE);
    expect(head).toMatchObject({ kind: 'body', statusCode: 206, offsetBytes: first, lengthBytes: last - first + 1 });
    expect(head.headers['Content-Range']).toBe(`bytes ${first}-${last}/1000`);
    expect(head.headers['Content-Length']).toBe(String(last - first + 1));
  });

  test.each([['bytes=1000-'], ['bytes=-0'], ['bytes=5000-6000,2000-']])('Range %s lies outside the file: 416 with bytes */size', (range) => {
    expect(fileHead({ range }, FILE)).toEqual({ kind: 'refused', statusCode: 416, headers: { 'Content-Range': 'bytes */1000' } });
  });

  test('several separate ranges and other units get the whole file', () => {
    expect(fileHead({ range: 'bytes=0-10,500-600' }, FILE)).toMatchObject({ statusCode: 200, lengthBytes: 1000 });
    expect(fileHead({ range: 'items=0-10' }, FILE)).toMatchObject({ statusCode: 200, lengthBytes: 1000 });
  });

  test.each([
    // RFC 9110 13.1.5: If-Range compares strongly; our weak ETag never matches, so the whole file.
    ['the (weak) ETag', ETAG, 200],
    ['its strong form', STRONG, 200],
    ['another ETag', '"other"', 200],
    ['Last-Modified', LAST_MODIFIED, 206],
    ['a date after it', AFTER, 206],
    ['a date before it', BEFORE, 200],
    ['something unparseable', 'whenever', 200],
  ])('If-Range with %s', (_what, ifRange, status) => {
    expect(fileHead({ range: 'bytes=0-9', 'if-range': ifRange }, FILE).statusCode).toBe(status);
  });

  test('satisfiableRanges keeps the order asked for after merging', () => {
    expect(satisfiableRanges(1000, 'bytes=500-600,0-10,5-20').map(({ first, last }) => [first, last])).toEqual([
      [500, 600],
      [0, 20],
    ]);
  });
});
