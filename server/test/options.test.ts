import { mkdtempSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseCli } from '../src/args.js';
import { ServerError } from '../src/errors.js';
import { DEFAULT_SERVER_OPTIONS, resolveServerOptions } from '../src/options.js';
import { makeSelfSignedCert, opensslMissing, removeDir } from './helpers.js';

const mediaDir = mkdtempSync(join(tmpdir(), 'sammy-options-'));
afterAll(() => removeDir(mediaDir));

function rejection(input: Record<string, unknown>): ServerError {
  try {
    resolveServerOptions({ mediaDir, ...input } as Parameters<typeof resolveServerOptions>[0]);
  } catch (err) {
    return err as ServerError;
  }
  throw new Error(`accepted ${JSON.stringify(input)}`);
}

describe('resolveServerOptions', () => {
  test('fills the defaults', () => {
    const o = resolveServerOptions({ mediaDir });
    expect(o).toMatchObject({ mediaDir, port: 8080, host: '127.0.0.1', burstPackets: 4, burstMode: 'auto', bodyPath: 'auto', pacing: true, spiralGuard: true, spiralGuardMultiplier: 2.5, corsOrigin: null });
    expect(o.playerDir).toMatch(/player\/dist$/);
    expect(o.limits).toEqual(DEFAULT_SERVER_OPTIONS.limits);
    expect(o.workers).toBe(availableParallelism());
    expect(o.tls).toBeNull();
  });

  test.each([
    [{ port: 70000 }, 'port', '70000', 'an integer from 0 to 65535'],
    [{ port: 1.5 }, 'port', '1.5', 'an integer'],
    [{ burstPackets: 0 }, 'burstPackets', '0', 'an integer from 1 to 65535'],
    [{ burstMode: 'tso' }, 'burstMode', '"tso"', 'auto, app, kernel'],
    [{ bodyPath: 'splice' }, 'bodyPath', '"splice"', 'auto, sendfile, stream'],
    [{ minRateKbps: -5 }, 'minRateKbps', '-5', 'an integer from 1'],
    [{ minRateKbps: 5000, maxRateKbps: 1000 }, 'maxRateKbps', '1000', 'at least minRateKbps (5000)'],
    [{ pacing: 'yes' }, 'pacing', '"yes"', 'true (on) or false (off)'],
    [{ spiralGuard: 'on' }, 'spiralGuard', '"on"', 'true (on) or false (off)'],
    [{ spiralGuardMultiplier: 0.5 }, 'spiralGuardMultiplier', '0.5', 'a number from 1 to 100'],
    [{ spiralGuardMultiplier: 101 }, 'spiralGuardMultiplier', '101', 'a number from 1 to 100'],
    [{ spiralGuardMultiplier: Number.NaN }, 'spiralGuardMultiplier', 'null', 'a number from 1 to 100'],
    [{ corsOrigin: 'http://a.example/path' }, 'corsOrigin', '"http://a.example/path"', 'one origin'],
    [{ corsOrigin: 'ftp://a.example' }, 'corsOrigin', '"ftp://a.example"', 'one origin'],
    [{ logLevel: 'loud' }, 'logLevel', '"loud"', 'fatal, error, warn, info, debug, silent'],
    [{ limits: { headersTimeoutMs: 50 } }, 'limits.headersTimeoutMs', '50', 'an integer from 100'],
    [{ workers: 0 }, 'workers', '0', 'an integer from 1 to 256'],
    [{ workers: 2.5 }, 'workers', '2.5', 'an integer from 1 to 256'],
    [{ tls: { certFile: '/nonexistent/cert.pem', keyFile: '/nonexistent/key.pem' } }, 'tls.certFile', '"/nonexistent/cert.pem"', 'a readable PEM certificate file (ENOENT)'],
    [{ tls: { certFile: '/etc/hostname' } }, 'tls.keyFile', 'null', 'a file path (a certificate and its key are given together)'],
    [{ limits: { headersTimeoutMs: 5000, requestTimeoutMs: 1000 } }, 'limits.headersTimeoutMs', '5000', 'at most limits.requestTimeoutMs'],
  ])('%j is refused, naming %s, the value %s and what is accepted', (input, option, value, accepted) => {
    const err = rejection(input);
    expect(err).toBeInstanceOf(ServerError);
    expect(err.code).toBe('SAMMY_SERVER_INVALID_OPTION');
    expect(err.message).toContain(`invalid ${option}: ${value}`);
    expect(err.message).toContain(accepted);
  });

  test('the media folder must exist and be a folder', () => {
    const file = join(mediaDir, 'a-file');
    writeFileSync(file, 'x');
    for (const bad of [join(mediaDir, 'missing'), file]) {
      const err = rejection({ mediaDir: bad });
      expect(err.code).toBe('SAMMY_SERVER_INVALID_OPTION');
      expect(err.message).toContain('invalid mediaDir');
      expect(err.message).toContain('an existing directory');
    }
  });

  (opensslMissing() === null ? test : test.skip)('TLS files must parse and be a certificate with its own key', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sammy-options-tls-'));
    try {
      const a = makeSelfSignedCert(dir, 'a');
      const b = makeSelfSignedCert(dir, 'b');
      expect(resolveServerOptions({ mediaDir, tls: { certFile: a.certFile, keyFile: a.keyFile } }).tls).toEqual({ certFile: a.certFile, keyFile: a.keyFile });
      const garbage = join(dir, 'garbage.pem');
      writeFileSync(garbage, 'not a PEM file');
      for (const [tls, option, accepted] of [
        [{ certFile: a.certFile, keyFile: b.keyFile }, 'tls.keyFile', 'the private key of the certificate'],
        [{ certFile: garbage, keyFile: a.keyFile }, 'tls.certFile', 'a PEM certificate'],
        [{ certFile: a.certFile, keyFile: garbage }, 'tls.keyFile', 'a PEM private key'],
      ] as const) {
        const err = rejection({ tls });
        expect(err.code).toBe('SAMMY_SERVER_INVALID_OPTION');
        expect(err.message).toContain(`invalid ${option}: `);
        expect(err.message).toContain(accepted);
      }
      // Over TLS the kernel cannot send the file as it is: bodies stream, and asking for sendfile is refused.
      const tls = { certFile: a.certFile, keyFile: a.keyFile };
      expect(resolveServerOptions({ mediaDir, tls, bodyPath: 'auto' }).bodyPath).toBe('auto');
      const err = rejection({ tls, bodyPath: 'sendfile' });
      expect(err.code).toBe('SAMMY_SERVER_INVALID_OPTION');
      expect(err.message).toContain('invalid bodyPath: "sendfile" (accepted: auto or stream with --tls-cert/--tls-key');
    } finally {
      removeDir(dir);
    }
  });

  test('CORS accepts * or one origin', () => {
    expect(resolveServerOptions({ mediaDir, corsOrigin: '*' }).corsOrigin).toBe('*');
    expect(resolveServerOptions({ mediaDir, corsOrigin: 'http://127.0.0.1:9000/' }).corsOrigin).toBe('http://127.0.0.1:9000');
  });
});

describe('parseCli', () => {
  test('maps every flag, resolving paths against the folder npm was started in', () => {
    const input = parseCli(
      ['--media', 'media', '--port', '0', '--host', '0.0.0.0', '--burst-packets', '40', '--burst-mode', 'app', '--body-path', 'stream', '--pacing', 'off',
        '--min-rate-kbps', '500', '--max-rate-kbps', '90000', '--log', 'out/t.jsonl', '--player', 'p', '--cors-origin', '*',
        '--spiral-guard', 'off', '--spiral-guard-multiplier', '3.5', '--workers', '3', '--tls-cert', 'c.pem', '--tls-key', 'k.pem'],
      '/work/x',
    );
    expect(input).toEqual({
      mediaDir: '/work/x/media', port: 0, host: '0.0.0.0', burstPackets: 40, burstMode: 'app', bodyPath: 'stream', pacing: false,
      minRateKbps: 500, maxRateKbps: 90000, logFile: '/work/x/out/t.jsonl', playerDir: '/work/x/p', corsOrigin: '*',
      spiralGuard: false, spiralGuardMultiplier: 3.5,
      workers: 3, tls: { certFile: '/work/x/c.pem', keyFile: '/work/x/k.pem' },
    });
  });

  test.each([
    [['--port', '8080'], 'SAMMY_SERVER_BAD_ARGS', '--media DIR is required'],
    [['--media', 'm', '--pacing', 'maybe'], 'SAMMY_SERVER_INVALID_OPTION', 'invalid --pacing: "maybe" (accepted: on, off)'],
    [['--media', 'm', '--port', 'eighty'], 'SAMMY_SERVER_INVALID_OPTION', 'invalid --port: "eighty" (accepted: a number)'],
    [['--media', 'm', '--spiral-guard', 'yes'], 'SAMMY_SERVER_INVALID_OPTION', 'invalid --spiral-guard: "yes" (accepted: on, off)'],
    [['--media', 'm', '--spiral-guard-multiplier', 'x2'], 'SAMMY_SERVER_INVALID_OPTION', 'invalid --spiral-guard-multiplier: "x2" (accepted: a number)'],
    [['--media', 'm', '--bogus'], 'SAMMY_SERVER_BAD_ARGS', "Unknown option '--bogus'"],
    [['--media', 'm', '--tls-cert', 'c.pem'], 'SAMMY_SERVER_BAD_ARGS', '--tls-cert FILE and --tls-key FILE are given together'],
    [['--media', 'm', '--workers', 'all'], 'SAMMY_SERVER_INVALID_OPTION', 'invalid --workers: "all" (accepted: a number)'],
  ])('%j -> %s', (argv, code, message) => {
    expect(() => parseCli(argv, '/')).toThrow(expect.objectContaining({ code, message: expect.stringContaining(message) }));
  });
});
