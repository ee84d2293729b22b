import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseCli } from '../src/args.js';
import { ServerError } from '../src/errors.js';
import { DEFAULT_SERVER_OPTIONS, resolveServerOptions } from '../src/options.js';
import { removeDir } from './helpers.js';

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
    expect(o).toMatchObject({ mediaDir, port: 8080, host: '127.0.0.1', burstPackets: 4, burstMode: 'auto', bodyPath: 'auto', pacing: true, corsOrigin: null });
    expect(o.playerDir).toMatch(/player\/dist$/);
    expect(o.limits).toEqual(DEFAULT_SERVER_OPTIONS.limits);
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
    [{ corsOrigin: 'http://a.example/path' }, 'corsOrigin', '"http://a.example/path"', 'one origin'],
    [{ corsOrigin: 'ftp://a.example' }, 'corsOrigin', '"ftp://a.example"', 'one origin'],
    [{ logLevel: 'loud' }, 'logLevel', '"loud"', 'fatal, error, warn, info, debug, silent'],
    [{ limits: { headersTimeoutMs: 50 } }, 'limits.headersTimeoutMs', '50', 'an integer from 100'],
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

  test('CORS accepts * or one origin', () => {
    expect(resolveServerOptions({ mediaDir, corsOrigin: '*' }).corsOrigin).toBe('*');
    expect(resolveServerOptions({ mediaDir, corsOrigin: 'http://127.0.0.1:9000/' }).corsOrigin).toBe('http://127.0.0.1:9000');
  });
});

describe('parseCli', () => {
  test('maps every flag, resolving paths against the folder npm was started in', () => {
    const input = parseCli(
      ['--media', 'media', '--port', '0', '--host', '0.0.0.0', '--burst-packets', '40', '--burst-mode', 'app', '--body-path', 'stream', '--pacing', 'off',
        '--min-rate-kbps', '500', '--max-rate-kbps', '90000', '--log', 'out/t.jsonl', '--player', 'p', '--cors-origin', '*'],
      '/work/x',
    );
    expect(input).toEqual({
      mediaDir: '/work/x/media', port: 0, host: '0.0.0.0', burstPackets: 40, burstMode: 'app', bodyPath: 'stream', pacing: false,
      minRateKbps: 500, maxRateKbps: 90000, logFile: '/work/x/out/t.jsonl', playerDir: '/work/x/p', corsOrigin: '*',
    });
  });

  test.each([
    [['--port', '8080'], 'SAMMY_SERVER_BAD_ARGS', '--media DIR is required'],
    [['--media', 'm', '--pacing', 'maybe'], 'SAMMY_SERVER_INVALID_OPTION', 'invalid --pacing: "maybe" (accepted: on, off)'],
    [['--media', 'm', '--port', 'eighty'], 'SAMMY_SERVER_INVALID_OPTION', 'invalid --port: "eighty" (accepted: a number)'],
    [['--media', 'm', '--bogus'], 'SAMMY_SERVER_BAD_ARGS', "Unknown option '--bogus'"],
  ])('%j -> %s', (argv, code, message) => {
    expect(() => parseCli(argv, '/')).toThrow(expect.objectContaining({ code, message: expect.stringContaining(message) }));
  });
});
