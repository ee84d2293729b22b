// nginx's options and command line: defaults, every refusal with its code and words, and leftover folders.
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_SERVER_OPTIONS } from '@sammy/server/options';
import { parseNginxCli } from '../src/args.js';
import { removeStaleFolders } from '../src/nginx.js';
import { DEFAULT_NGINX_OPTIONS, resolveNginxOptions, type NginxServerOptionsInput } from '../src/options.js';

const refusal = (f: () => unknown): string => {
  try {
    f();
  } catch (err) {
    return `${(err as { code: string }).code}: ${(err as Error).message}`;
  }
  return 'accepted';
};

describe('nginx options', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'sammy-nginx-options-'));
    mkdirSync(join(dir, 'media'));
    writeFileSync(join(dir, 'not-a-cert.pem'), 'hello');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test("the defaults are the Node server's where it has the option", () => {
    const o = resolveNginxOptions({ mediaDir: join(dir, 'media') });
    expect(o).toEqual({ ...DEFAULT_NGINX_OPTIONS, mediaDir: join(dir, 'media') });
    expect(o).toMatchObject({
      host: '127.0.0.1',
      port: 8080,
      workers: availableParallelism(),
      pacing: true,
      spiralGuard: true,
      spiralGuardMultiplier: 2.5,
      minRateKbps: 100,
      maxRateKbps: 10_000_000,
      honourQueryCmcd: true,
      tailHold: true,
      logFile: null,
      tls: null,
      http2: false,
      corsOrigin: null,
      playerDir: DEFAULT_SERVER_OPTIONS.playerDir,
    });
  });

  test.each<[string, Partial<NginxServerOptionsInput>, string]>([
    ['a port out of range', { port: 70000 }, 'SAMMY_NGINX_INVALID_OPTION: invalid --port: 70000 (accepted: an integer from 0 to 65535)'],
    ['a rate of 0', { minRateKbps: 0 }, 'invalid --min-rate-kbps: 0 (accepted: an integer from 1 to 1000000000000)'],
    ['max below min', { minRateKbps: 900, maxRateKbps: 800 }, 'invalid --max-rate-kbps: 800 (accepted: at least --min-rate-kbps (900))'],
    ['a guard below 1x', { spiralGuardMultiplier: 0.5 }, 'invalid --spiral-guard-multiplier: 0.5 (accepted: a number from 1 to 100)'],
    ['no workers', { workers: 0 }, 'invalid --workers: 0 (accepted: an integer from 1 to 256)'],
    ['a host with a space', { host: 'a b' }, 'invalid --host: "a b" (accepted: an IPv4 or IPv6 address'],
    ['a host that would end the directive', { host: '1.2.3.4;' }, 'invalid --host: "1.2.3.4;"'],
    ['a missing media folder', { mediaDir: '/nonexistent/media' }, 'invalid --media: "/nonexistent/media" (accepted: an existing directory)'],
    ['a quote in a path', { mediaDir: '/tmp/a"b' }, 'invalid --media: "/tmp/a\\"b" (accepted: a directory: a path without ", \\, $ or control'],
    ['a $ in the page folder', { playerDir: '/tmp/$uri' }, 'invalid --player: "/tmp/$uri"'],
    ['a newline in the log', { logFile: '/tmp/a\nb' }, 'invalid --log: "/tmp/a\\nb"'],
    ['HTTP/2 without TLS', { http2: true }, 'invalid --http2: "on" (accepted: on only with --tls-cert and --tls-key'],
    ['a certificate without its key', { tls: { certFile: '/tmp/c.pem' } as never }, 'invalid --tls-key: undefined (accepted: a PEM private key file'],
    [
      'a certificate that is not there',
      { tls: { certFile: '/nonexistent.pem', keyFile: '/nonexistent.pem' } },
      'invalid --tls-cert: "/nonexistent.pem" (accepted: a readable PEM certificate file (ENOENT))',
    ],
    ['a CORS origin with a path', { corsOrigin: 'http://a.example/x' }, 'SAMMY_NGINX_INVALID_OPTION: invalid --cors-origin: "http://a.example/x"'],
    ['pacing as text', { pacing: 'on' as never }, 'invalid --pacing: "on" (accepted: on, off)'],
  ])('%s is refused', (_what, input, message) => {
    expect(refusal(() => resolveNginxOptions({ mediaDir: join(dir, 'media'), ...input }))).toContain(message);
  });

  test('a file that is not a certificate is refused as --tls-cert, with the reason', () => {
    const pem = join(dir, 'not-a-cert.pem');
    expect(refusal(() => resolveNginxOptions({ mediaDir: join(dir, 'media'), tls: { certFile: pem, keyFile: pem } }))).toMatch(
      /^SAMMY_NGINX_INVALID_OPTION: invalid --tls-cert: ".*not-a-cert\.pem" \(accepted: a PEM certificate/,
    );
  });
});

describe('the command line', () => {
  test('every flag, with paths relative to the folder npm was started in', () => {
    const argv = [
      '--media', 'm', '--port', '0', '--host', '::1', '--player', 'p', '--workers', '3', '--pacing', 'off', '--spiral-guard', 'off',
      '--spiral-guard-multiplier', '3.5', '--min-rate-kbps', '200', '--max-rate-kbps', '50000', '--query-cmcd', 'off', '--tail-hold', 'off',
      '--log', 'x.jsonl', '--tls-cert', 'c.pem', '--tls-key', '/k.pem', '--http2', 'on', '--cors-origin', '*',
    ];
    expect(parseNginxCli(argv, '/data')).toEqual({
      mediaDir: '/data/m',
      port: 0,
      host: '::1',
      playerDir: '/data/p',
      workers: 3,
      pacing: false,
      spiralGuard: false,
      spiralGuardMultiplier: 3.5,
      minRateKbps: 200,
      maxRateKbps: 50_000,
      honourQueryCmcd: false,
      tailHold: false,
      logFile: '/data/x.jsonl',
      tls: { certFile: '/data/c.pem', keyFile: '/k.pem' },
      http2: true,
      corsOrigin: '*',
    });
    expect(parseNginxCli(['--help'])).toBe('help');
  });

  test.each([
    [['--media', 'm', '--burst-packets', '4'], /^SAMMY_NGINX_BAD_ARGS: --burst-packets is not an option of npm run nginx: .*kernel's own trains.*"Burst size"/],
    [['--media', 'm', '--burst-mode', 'app'], /^SAMMY_NGINX_BAD_ARGS: --burst-mode is not an option of npm run nginx: .*kernel's own.*"Burst size"/],
    [['--port', '1'], /^SAMMY_NGINX_BAD_ARGS: --media DIR is required\nusage: npm run nginx/],
    [['--media', 'm', '--body-path', 'stream'], /^SAMMY_NGINX_BAD_ARGS: Unknown option '--body-path'/],
    [['--media', 'm', '--port', 'x'], /^SAMMY_NGINX_INVALID_OPTION: invalid --port: "x" \(accepted: a number\)$/],
    [['--media', 'm', '--pacing', 'yes'], /^SAMMY_NGINX_INVALID_OPTION: invalid --pacing: "yes" \(accepted: on, off\)$/],
    [['--media', 'm', '--tls-cert', 'c.pem'], /^SAMMY_NGINX_BAD_ARGS: --tls-cert FILE and --tls-key FILE are given together/],
  ])('%j is refused', (argv, message) => {
    expect(refusal(() => parseNginxCli(argv, '/data'))).toMatch(message);
  });
});

describe('leftover folders', () => {
  test("a dead run's folder is removed; a live one's, the edge's and other folders are kept", () => {
    const dir = mkdtempSync(join(tmpdir(), 'sammy-nginx-sweep-'));
    try {
      // A pid above the kernel's pid_max is never alive.
      const names = ['sammy-nginx-99999999-abc', `sammy-nginx-${process.pid}-def`, 'sammy-edge-99999999-abc', 'sammy-nginx-xyz', 'other'];
      for (const name of names) mkdirSync(join(dir, name));
      expect(removeStaleFolders(dir)).toEqual(['sammy-nginx-99999999-abc']);
      expect(readdirSync(dir).sort()).toEqual(names.slice(1).sort());
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
