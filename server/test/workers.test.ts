// --workers N with real processes and sockets: connections spread over the workers,
// /metrics sums every worker whichever one answers, a worker that dies is replaced
// (and logged) while the others keep serving, and no worker outlives the primary.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { childPids, startServer, stop, type ServerProcess } from '../src/process.js';
import { makeDir, metricValue, removeDir, sleep, timedGet, waitFor } from './helpers.js';

const serverDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const SEGMENT_BYTES = 200_000;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A request that hangs fails the test instead of timing it out. */
function withTimeout<T>(p: Promise<T>, ms = 5000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)));
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

async function body(port: number, path: string): Promise<string> {
  const res = await withTimeout(timedGet(port, path, { keepBody: true }));
  expect(res.status).toBe(200);
  return res.body!.toString();
}

/** /metrics on a fresh connection (each may land on another worker). */
const scrape = (port: number): Promise<string> => body(port, '/metrics');
const healthPid = async (port: number): Promise<number> => (JSON.parse(await body(port, '/healthz')) as { pid: number }).pid;

const linuxOnly = process.platform === 'linux' ? describe : describe.skip;
if (process.platform !== 'linux') console.log('SKIP: worker tests read /proc for the workers\' pids');

linuxOnly('npm run serve -- --workers 2', () => {
  let media: string;
  let server: ServerProcess;
  let primaryPid: number;

  beforeAll(async () => {
    media = makeDir({ 'seg.m4s': Buffer.alloc(SEGMENT_BYTES, 7) });
    server = await startServer({ args: ['--media', media, '--port', '0', '--workers', '2', '--log-level', 'warn'], cwd: serverDir });
    primaryPid = server.process.child.pid!;
  }, 60_000);
  afterAll(async () => {
    await stop(server.process);
    removeDir(media);
  });

  test('prints one listening line, spreads connections over both workers, and /metrics sums them whichever answers', async () => {
    expect(server.process.stdout().match(/listening on /g)).toHaveLength(1);
    const pids = childPids(primaryPid);
    expect(pids).toHaveLength(2);
    const answered = new Set<number>();
    for (let i = 0; i < 4; i++) answered.add(await healthPid(server.port));
    expect([...answered].sort()).toEqual([...pids].sort());

    const before = await scrape(server.port);
    const requestsBefore = metricValue(before, 'sammy_http_requests_total{route="/media/*",status="200"}') ?? 0;
    const bytesBefore = metricValue(before, 'sammy_media_bytes_total') ?? 0;
    for (let i = 0; i < 6; i++) expect((await withTimeout(timedGet(server.port, '/media/seg.m4s'))).bytes).toBe(SEGMENT_BYTES);
    // A response is counted when the server has ended it, which can be a moment after the client
    // has its last byte (the sendfile path ends it when the sender thread reports the last byte
    // left): wait until all six are counted, then check that two scrapes on two connections
    // (round-robin puts them on different workers) both see all six.
    const deadline = Date.now() + 5000;
    while (metricValue(await scrape(server.port), 'sammy_http_requests_total{route="/media/*",status="200"}') !== requestsBefore + 6 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    for (let i = 0; i < 2; i++) {
      const text = await scrape(server.port);
      expect(metricValue(text, 'sammy_http_requests_total{route="/media/*",status="200"}')).toBe(requestsBefore + 6);
      expect(metricValue(text, 'sammy_media_bytes_total')).toBe(bytesBefore + 6 * SEGMENT_BYTES);
      expect(metricValue(text, 'sammy_workers')).toBe(2);
      expect(metricValue(text, 'sammy_metrics_workers_reporting')).toBe(2);
    }
  }, 60_000);

  test('a worker that dies is logged and replaced, and the server serves throughout', async () => {
    const [victim, survivor] = childPids(primaryPid);
    process.kill(victim!, 'SIGKILL');
    // The primary logs the death (a connection it hands over in the instant before it
    // knows dies with the worker, like the worker's own connections).
    await waitFor(() => (server.process.stdout().includes(`"workerPid":${victim},"code":null,"signal":"SIGKILL"`) ? true : null), 10_000);
    expect(server.process.stdout()).toContain('worker died; starting a replacement');
    // Before the replacement listens, the survivor takes every connection.
    for (let i = 0; i < 3; i++) expect((await withTimeout(timedGet(server.port, '/media/seg.m4s'))).bytes).toBe(SEGMENT_BYTES);
    const replaced = await waitFor(() => {
      const pids = childPids(primaryPid);
      return pids.length === 2 && !pids.includes(victim!) ? pids : null;
    }, 30_000);
    expect(replaced).toContain(survivor);
    // The replacement listens on the same port and gets connections.
    const newcomer = replaced.find((p) => p !== survivor)!;
    let servedByNewcomer = false;
    for (let i = 0; i < 20 && !servedByNewcomer; i++) {
      servedByNewcomer = (await healthPid(server.port)) === newcomer;
      if (!servedByNewcomer) await sleep(200);
    }
    expect(servedByNewcomer).toBe(true);
    const text = await scrape(server.port);
    expect(metricValue(text, 'sammy_workers')).toBe(2);
    expect(metricValue(text, 'sammy_worker_restarts_total')).toBe(1);
  }, 60_000);

  test('SIGTERM stops the primary with exit code 0 and every worker with it', async () => {
    const pids = childPids(primaryPid);
    expect(pids).toHaveLength(2);
    expect(await stop(server.process)).toBe(0);
    expect(pids.filter(alive)).toEqual([]);
  }, 30_000);
});

linuxOnly('a primary that is killed outright', () => {
  test('leaves no worker behind', async () => {
    const media = makeDir({ 'seg.m4s': Buffer.alloc(1000, 1) });
    try {
      const server = await startServer({ args: ['--media', media, '--port', '0', '--workers', '2', '--log-level', 'warn'], cwd: serverDir });
      const pids = childPids(server.process.child.pid!);
      expect(pids).toHaveLength(2);
      await stop(server.process, { signal: 'SIGKILL' });
      await waitFor(() => (pids.some(alive) ? null : true), 10_000);
      expect(pids.filter(alive)).toEqual([]);
    } finally {
      removeDir(media);
    }
  }, 60_000);
});
