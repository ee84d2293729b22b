// The server bench's references for Node's own floor and fastify's (bench/node-floor.ts),
// on loopback: each must serve the section's files as they are and pace a connection
// that asks, or the floor it measures is not the work the server's rows do.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Http1Connection, requestHead } from '../bench/http1.js';
import { startServer, stop, type ServerProcess } from '../src/process.js';
import { loadSocketControl } from '../src/socket.js';
import { MB, makeDir, randomFile, removeDir } from './helpers.js';

const control = loadSocketControl();
const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

const FLOOR_CLI = fileURLToPath(new URL('../bench/node-floor.ts', import.meta.url));

describe.each(['node', 'fastify'])("the %s floor for the CPU bench", (framework) => {
  let mediaDir: string;
  let floor: ServerProcess;
  const body = randomFile(2 * MB);

  beforeAll(async () => {
    mediaDir = makeDir({ 'seg-0.m4s': body, 'other.txt': Buffer.from('not served') });
    floor = await startServer({ name: `${framework}-floor`, cli: FLOOR_CLI, args: [mediaDir, '127.0.0.1', framework] });
  });
  afterAll(async () => {
    await stop(floor.process);
    removeDir(mediaDir);
  });

  test('serves a segment whole on a keep-alive connection, and 404 for anything else', async () => {
    const whole = await fetch(`${floor.url}/media/seg-0.m4s`);
    expect(whole.status).toBe(200);
    expect(sha(Buffer.from(await whole.arrayBuffer()))).toBe(sha(body));
    const conn = await Http1Connection.open('127.0.0.1', floor.port);
    try {
      expect((await conn.get(requestHead('127.0.0.1', '/media/other.txt'))).status).toBe(404);
      expect((await conn.get(requestHead('127.0.0.1', '/media/../seg-0.m4s'))).status).toBe(404);
      expect((await conn.get(requestHead('127.0.0.1', '/elsewhere/seg-0.m4s'))).status).toBe(404);
      expect((await conn.get(requestHead('127.0.0.1', '/media/seg-0.m4s'))).bodyBytes).toBe(body.length);
    } finally {
      conn.close();
    }
  });

  (control.available ? test : test.skip)('caps a connection that sends a CMCD rtp at that rate', async () => {
    const conn = await Http1Connection.open('127.0.0.1', floor.port);
    try {
      // 2 MB at 8000 kbit/s (1 MB/s): about 2 s; Linux sends a connection's first 10 packets unpaced.
      const paced = await conn.get(requestHead('127.0.0.1', '/media/seg-0.m4s', { 'CMCD-Status': 'rtp=8000' }));
      expect(paced.bodyBytes).toBe(body.length);
      expect(paced.lastByteMs).toBeGreaterThan(1000);
      expect(paced.lastByteMs).toBeLessThan(4000);
    } finally {
      conn.close();
    }
  });
});

test('the floor refuses a framework it does not know, with its usage', () => {
  const r = spawnSync(process.execPath, ['--import', 'tsx', FLOOR_CLI, '/nonexistent', '127.0.0.1', 'express'], { encoding: 'utf8' });
  expect(r.status).toBe(2);
  expect(r.stderr).toContain('usage: node --import tsx bench/node-floor.ts MEDIA_DIR HOST [node|fastify]');
});
