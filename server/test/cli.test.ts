// The command line as scripts use it: the one "listening on" line, then SIGTERM.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeDir, removeDir, timedGet } from './helpers.js';

const serverDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const tsx = createRequire(import.meta.url).resolve('tsx/cli');

test('npm run serve -- --media DIR --port 0 prints "listening on http://HOST:PORT", serves, and stops on SIGTERM', async () => {
  const media = makeDir({ 'seg.m4s': Buffer.alloc(1000, 3) });
  const child = spawn(process.execPath, [tsx, 'src/cli.ts', '--media', media, '--port', '0', '--log-level', 'warn'], { cwd: serverDir });
  try {
    const port = await new Promise<number>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString();
        const m = /^listening on http:\/\/127\.0\.0\.1:(\d+)$/m.exec(out);
        if (m) resolve(Number(m[1]));
      });
      child.once('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
    });
    const res = await timedGet(port, '/media/seg.m4s');
    expect([res.status, res.bytes]).toEqual([200, 1000]);
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  } finally {
    child.kill('SIGKILL');
    removeDir(media);
  }
}, 30_000);

test('a bad option stops it with the coded error on stderr and exit code 2', async () => {
  const child = spawn(process.execPath, [tsx, 'src/cli.ts', '--media', '/nonexistent-sammy-media'], { cwd: serverDir });
  let err = '';
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const code = await new Promise<number | null>((r) => child.once('exit', r));
  expect(code).toBe(2);
  expect(err).toContain('serve: SAMMY_SERVER_INVALID_OPTION: invalid --media: "/nonexistent-sammy-media" (accepted: an existing directory)');
}, 30_000);
