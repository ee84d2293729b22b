// What lies in the media folder is not all servable: a symlink out of the folder, a
// symlink loop and a FIFO are refused (404, logged, counted) before anything is
// opened, and an ordinary request right after is served at once. Error responses
// come in one JSON shape that never echoes the request; an invalid Range is ignored.
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { errorResponseBody } from '../../src/errors.js';
import { openRegularFile } from '../../src/static-files.js';
import type { ServerOptionsInput } from '../../src/options.js';
import { makeSelfSignedCert, metricValue, opensslMissing, randomFile, rawExchange, removeDir, requestHead, startServer, timedGet, type RunningServer, type SelfSignedCert } from '../helpers.js';

const SECRET = 'top-secret-outside-media';
const SEGMENT_BYTES = 100_000;

/** <tmp>/secret.txt and <tmp>/outside/ beside <tmp>/media/ with the hostile entries. */
function makeTree(): { root: string; mediaDir: string } {
  const root = mkdtempSync(join(tmpdir(), 'sammy-hostile-files-'));
  const mediaDir = join(root, 'media');
  mkdirSync(mediaDir);
  mkdirSync(join(root, 'outside'));
  writeFileSync(join(root, 'secret.txt'), SECRET);
  writeFileSync(join(root, 'outside', 'chunk.m4s'), SECRET);
  writeFileSync(join(mediaDir, 'seg.m4s'), randomFile(SEGMENT_BYTES));
  mkdirSync(join(mediaDir, 'rung1'));
  writeFileSync(join(mediaDir, 'rung1', 'chunk-1.m4s'), randomFile(1000));
  symlinkSync(join(root, 'secret.txt'), join(mediaDir, 'passwd.m4s'));
  symlinkSync('/etc/passwd', join(mediaDir, 'etc-passwd.m4s'));
  symlinkSync(join(root, 'outside'), join(mediaDir, 'outdir'));
  symlinkSync('loop-b.m4s', join(mediaDir, 'loop-a.m4s'));
  symlinkSync('loop-a.m4s', join(mediaDir, 'loop-b.m4s'));
  // Links that stay inside the folder are served.
  writeFileSync(join(mediaDir, '.hidden.m4s'), 'hidden');
  symlinkSync('seg.m4s', join(mediaDir, 'alias.m4s'));
  symlinkSync('rung1', join(mediaDir, 'rung-alias'));
  execFileSync('mkfifo', [join(mediaDir, 'fifo.m4s')]);
  return { root, mediaDir };
}

async function expectServedAtOnce(server: RunningServer): Promise<void> {
  const res = await timedGet(server.port, '/media/seg.m4s');
  expect(res.status).toBe(200);
  expect(res.bytes).toBe(SEGMENT_BYTES);
  expect(res.elapsedMs).toBeLessThan(1000);
}

async function refusedFileCount(server: RunningServer): Promise<number> {
  const res = await timedGet(server.port, '/metrics', { keepBody: true });
  return metricValue(res.body!.toString(), 'sammy_errors_total{kind="refused_file"}') ?? 0;
}

/** The JSON error body of a raw response, checked for the one shape. */
function errorBodyOf(text: string): Record<string, unknown> {
  const body = text.slice(text.indexOf('\r\n\r\n') + 4);
  expect(text.toLowerCase()).toContain('content-type: application/json');
  const parsed = JSON.parse(body) as Record<string, unknown>;
  expect(Object.keys(parsed).sort()).toEqual(['code', 'error', 'message', 'statusCode']);
  expect(parsed['code']).toMatch(/^(SAMMY|FST)_[A-Z0-9_]+$/);
  return parsed;
}

/** Registers a server over a fresh tree for the enclosing describe block. */
function serverOnTree(limits: ServerOptionsInput['limits'] = {}): { tree: () => ReturnType<typeof makeTree>; server: () => RunningServer } {
  let tree: ReturnType<typeof makeTree>;
  let server: RunningServer;
  beforeAll(async () => {
    tree = makeTree();
    server = await startServer({ mediaDir: tree.mediaDir, limits });
  });
  afterAll(async () => {
    await server.close();
    removeDir(tree.root);
  });
  return { tree: () => tree, server: () => server };
}

describe('files the media folder holds but the server does not serve', () => {
  const ctx = serverOnTree();

  test.each([
    ['a symlink to a file outside the folder', '/media/passwd.m4s', 'resolves outside the served folder'],
    ['a symlink to /etc/passwd', '/media/etc-passwd.m4s', 'resolves outside the served folder'],
    ['a file below a symlinked folder outside', '/media/outdir/chunk.m4s', 'resolves outside the served folder'],
    ['a symlink loop', '/media/loop-a.m4s', 'symlink loop'],
    ['a FIFO named like a segment', '/media/fifo.m4s', 'not a regular file'],
  ])('%s: 404, logged, counted; the next request is served at once', async (_name, path, reason) => {
    const countBefore = await refusedFileCount(ctx.server());
    const res = await rawExchange(ctx.server().port, requestHead(path));
    expect(res.status).toBe(404);
    expect(res.text).not.toContain(SECRET);
    expect(res.text).not.toContain('root:');
    expect(errorBodyOf(res.text)).toEqual(errorResponseBody(404));
    expect(await refusedFileCount(ctx.server())).toBe(countBefore + 1);
    const line = ctx.server().logs.lines.find((l) => l['msg'] === 'refused file' && l['path'] === path.slice('/media'.length));
    expect(line).toMatchObject({ reason, level: 40 });
    await expectServedAtOnce(ctx.server());
  });

  test('five requests for a FIFO at once leave the file threads free', async () => {
    const fifos = Array.from({ length: 5 }, () => rawExchange(ctx.server().port, requestHead('/media/fifo.m4s')));
    await expectServedAtOnce(ctx.server());
    for (const res of await Promise.all(fifos)) expect(res.status).toBe(404);
  });

  test('a file swapped for a FIFO while requests for it run never hangs a request or the server', async () => {
    await raceAgainstFifo(ctx.tree().mediaDir, (path) => timedGet(ctx.server().port, path, { timeoutMs: 5000 }));
    await expectServedAtOnce(ctx.server());
  }, 20_000);

  test('the body is read from the descriptor that was checked: a FIFO is refused at once, without blocking', () => {
    const opened = openRegularFile(join(ctx.tree().mediaDir, 'fifo.m4s'));
    expect(opened).toEqual({ refused: 'not a regular file' });
  });

  test('symlinks that stay inside the folder are served', async () => {
    const alias = await timedGet(ctx.server().port, '/media/alias.m4s');
    expect(alias.status).toBe(200);
    expect(alias.bytes).toBe(SEGMENT_BYTES);
    const dirAlias = await timedGet(ctx.server().port, '/media/rung-alias/chunk-1.m4s');
    expect(dirAlias.status).toBe(200);
    expect(dirAlias.bytes).toBe(1000);
  });
});

/**
 * Another process swaps race.m4s between a regular file and a FIFO as fast as it can,
 * so some requests pass the checks on the file and then meet the FIFO: every body
 * path opens what it checked without blocking, and refuses what is not a file. Each
 * request must end: the whole file, or 404 when a FIFO (or no file) stood there.
 */
async function raceAgainstFifo(dir: string, get: (path: string) => Promise<{ status: number; bytes: number }>, minAnswers = 40): Promise<void> {
  writeFileSync(join(dir, 'race-file.m4s'), randomFile(SEGMENT_BYTES));
  // The loop ends on its own after 10 s, should the test die before it kills it.
  const swapper = spawn('bash', ['-c', 'cd "$1"; while [ $SECONDS -lt 10 ]; do mkfifo f.tmp; mv -f f.tmp race.m4s; cp race-file.m4s s.tmp; mv -f s.tmp race.m4s; done', 'swap', dir], { stdio: 'ignore' });
  try {
    const answers: { status: number; bytes: number }[] = [];
    const deadline = Date.now() + 3000;
    while (Date.now() < deadline) {
      const batch = await Promise.all(Array.from({ length: 8 }, () => get('/media/race.m4s')));
      answers.push(...batch.map((r) => ({ status: r.status, bytes: r.bytes })));
    }
    expect(answers.length).toBeGreaterThan(minAnswers);
    expect(answers.filter((a) => !(a.status === 404 || (a.status === 200 && a.bytes === SEGMENT_BYTES)))).toEqual([]);
  } finally {
    swapper.kill('SIGKILL');
  }
}

const tlsMissing = opensslMissing();
if (tlsMissing !== null) console.log(`SKIP: the HTTPS case needs a certificate: ${tlsMissing}`);

// Over TLS every body streams (Node encrypts it); the same server speaks HTTP/2 too.
(tlsMissing === null ? describe : describe.skip)('a file swapped for a FIFO, over HTTPS (--http2 server, HTTP/1.1 by ALPN)', () => {
  let tree: ReturnType<typeof makeTree>;
  let server: RunningServer;
  let cert: SelfSignedCert;
  beforeAll(async () => {
    tree = makeTree();
    cert = makeSelfSignedCert(tree.root);
    server = await startServer({ mediaDir: tree.mediaDir, http2: true, tls: { certFile: cert.certFile, keyFile: cert.keyFile } });
  });
  afterAll(async () => {
    await server.close();
    removeDir(tree.root);
  });

  test('never hangs a request or the server', async () => {
    // A TLS handshake per request: fewer answers in the same time.
    await raceAgainstFifo(tree.mediaDir, (path) => timedGet(server.port, path, { ca: cert.cert, timeoutMs: 5000 }), 16);
    const res = await timedGet(server.port, '/media/seg.m4s', { ca: cert.cert });
    expect([res.status, res.bytes]).toEqual([200, SEGMENT_BYTES]);
  }, 20_000);
});

describe('one error shape, never echoing the request', () => {
  const ctx = serverOnTree({ headersTimeoutMs: 1000, requestTimeoutMs: 2000 });

  const MARK = 'ATTACKER<script>';
  test.each([
    ['a missing file', requestHead(`/media/${encodeURIComponent(MARK)}.m4s`), 404, 'SAMMY_NOT_FOUND'],
    ['a missing route', requestHead(`/${encodeURIComponent(MARK)}/x/y`), 404, 'SAMMY_NOT_FOUND'],
    ['another method', `POST /media/seg.m4s?${encodeURIComponent(MARK)} HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`, 404, 'SAMMY_NOT_FOUND'],
    ['a dotfile', requestHead('/media/.hidden.m4s'), 403, 'SAMMY_FORBIDDEN'],
    ['a dot segment', requestHead(`/media/../${encodeURIComponent(MARK)}`), 400, 'SAMMY_BAD_PATH'],
    ['a failed If-Match', requestHead('/media/seg.m4s', 'If-Match: "nope"\r\n'), 412, 'SAMMY_PRECONDITION_FAILED'],
    ['a range past the end', requestHead('/media/seg.m4s', 'Range: bytes=999999999-\r\n'), 416, 'SAMMY_RANGE_NOT_SATISFIABLE'],
    ['a malformed request line', `GET /media/seg.m4s ${MARK}\r\n\r\n`, 400, 'SAMMY_BAD_REQUEST'],
    ['a head over the size limit', requestHead('/media/seg.m4s', `X-Pad: ${MARK}${'p'.repeat(20_000)}\r\n`), 431, 'SAMMY_HEADERS_TOO_LARGE'],
  ])('%s: %#', async (_name, request, status, code) => {
    const res = await rawExchange(ctx.server().port, request);
    expect(res.status).toBe(status);
    expect(res.text).not.toContain('ATTACKER');
    expect(res.text).not.toContain('<html');
    const body = errorBodyOf(res.text);
    expect(body).toMatchObject({ statusCode: status, code });
    await expectServedAtOnce(ctx.server());
  });

  test('416 keeps Content-Range: bytes */size', async () => {
    const res = await rawExchange(ctx.server().port, requestHead('/media/seg.m4s', 'Range: bytes=999999999-\r\n'));
    expect(res.text.toLowerCase()).toContain(`content-range: bytes */${SEGMENT_BYTES}`);
  });
});

describe('Range: invalid syntax is ignored (200, whole body); only unsatisfiable ranges get 416', () => {
  const ctx = serverOnTree();

  test.each([
    ['bytes=abc'],
    ['bytes='],
    ['bytes=0x10-0x20'],
    ['bytes=20-10'],
    ['bytes=1-2-3'],
    ['bytes=--5'],
    ['items=0-10'],
    ['0-10'],
    ['bytes = 0-0'],
  ])('Range: %s -> 200 with the whole file', async (range) => {
    const res = await timedGet(ctx.server().port, '/media/seg.m4s', { headers: { Range: range } });
    expect(res.status).toBe(200);
    expect(res.bytes).toBe(SEGMENT_BYTES);
  });

  test.each([
    ['bytes=16-32', 206, 17],
    ['bytes=-10', 206, 10],
    ['bytes=99990-', 206, 10],
    ['Bytes=0-0', 206, 1],
    ['bytes= 0-0 , ', 206, 1],
    ['bytes=0-0,,', 206, 1],
    ['bytes=100000-', 416, null],
    ['bytes=-0', 416, null],
  ])('Range: %s -> %d', async (range, status, bytes) => {
    const res = await timedGet(ctx.server().port, '/media/seg.m4s', { headers: { Range: range } });
    expect(res.status).toBe(status);
    if (bytes !== null) expect(res.bytes).toBe(bytes);
  });
});
