// The shared process helper: the `listening on` contract and starting the server with it.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { listeningLine, parseListeningLine, ProcessError, startServer, stop } from '../src/process.js';
import { makeDir, removeDir, timedGet } from './helpers.js';

const serverDir = join(dirname(fileURLToPath(import.meta.url)), '..');

test('the listening line is written and read back the same way (IPv6 in brackets)', () => {
  expect(listeningLine('127.0.0.1', 8080)).toBe('listening on http://127.0.0.1:8080\n');
  expect(parseListeningLine(`noise\n${listeningLine('::1', 40123)}`)).toEqual({ url: 'http://[::1]:40123', port: 40123 });
  expect(parseListeningLine('listening on http://127.0.0.1:80')).toBeNull(); // not a whole line yet
});

test('startServer waits for the line, the server serves, and stop ends it with exit code 0', async () => {
  const media = makeDir({ 'seg.m4s': Buffer.alloc(500, 1) });
  try {
    const s = await startServer({ args: ['--media', media, '--host', '127.0.0.1', '--port', '0', '--log-level', 'warn'], cwd: serverDir });
    try {
      expect(s.url).toBe(`http://127.0.0.1:${s.port}`);
      const res = await timedGet(s.port, '/media/seg.m4s');
      expect([res.status, res.bytes]).toEqual([200, 500]);
    } finally {
      expect(await stop(s.process)).toBe(0);
    }
  } finally {
    removeDir(media);
  }
}, 30_000);

test('a server that exits before the line is a coded ProcessError carrying its stderr', async () => {
  const err = await startServer({ args: ['--media', '/nonexistent-sammy-media'], cwd: serverDir }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ProcessError);
  expect(err).toMatchObject({ code: 'SAMMY_PROCESS_EXITED', message: expect.stringContaining('SAMMY_SERVER_INVALID_OPTION') });
}, 30_000);
