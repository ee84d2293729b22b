// The edge's options, the Traffic Server configuration written from them, and its folder.
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseEdgeCli } from '../src/args.js';
import { atsConfigFiles, atsLayout, portDescriptor } from '../src/ats-config.js';
import { removeStaleFolders } from '../src/edge.js';
import { DEFAULT_EDGE_OPTIONS, EdgeError, resolveEdgeOptions } from '../src/options.js';

const refusal = (f: () => unknown): string => {
  try {
    f();
  } catch (err) {
    return `${(err as EdgeError).code}: ${(err as Error).message}`;
  }
  return 'accepted';
};

describe('edge options', () => {
  test('defaults are the Node server rate bounds; the origin loses a trailing slash', () => {
    expect(resolveEdgeOptions({ originUrl: 'http://127.0.0.1:8080/' })).toEqual({ ...DEFAULT_EDGE_OPTIONS, originUrl: 'http://127.0.0.1:8080', minRateKbps: 100, maxRateKbps: 10_000_000 });
    expect(resolveEdgeOptions({ originUrl: 'http://origin:8080/cdn/' }).originUrl).toBe('http://origin:8080/cdn');
  });

  test.each([
    [{ originUrl: 'https://x' }, 'SAMMY_EDGE_INVALID_OPTION: invalid --origin: "https://x"'],
    [{ originUrl: 'http://x/?a=1' }, 'invalid --origin'],
    [{ originUrl: 'not a url' }, 'invalid --origin'],
    [{ originUrl: 'http://x', minRateKbps: 0 }, 'invalid --min-rate-kbps: 0 (accepted: an integer from 1 to 1000000000000)'],
    [{ originUrl: 'http://x', minRateKbps: 900, maxRateKbps: 800 }, 'invalid --max-rate-kbps: 800 (accepted: at least --min-rate-kbps (900))'],
    [{ originUrl: 'http://x', port: 70000 }, 'invalid --port: 70000 (accepted: an integer from 0 to 65535)'],
    [{ originUrl: 'http://x', host: 'localhost' }, 'invalid --host: "localhost" (accepted: an IPv4 or IPv6 address'],
    [{ originUrl: 'http://x', cacheSizeMb: 8 }, 'invalid --cache-mb: 8 (accepted: an integer from 16'],
  ])('%j is refused: %s', (input, message) => {
    expect(refusal(() => resolveEdgeOptions(input))).toContain(message);
  });

  test('the command line, with paths relative to where npm was started', () => {
    expect(parseEdgeCli(['--origin', 'http://o:1', '--port', '0', '--query-cmcd', 'off', '--log', 'x.jsonl', '--max-rate-kbps', '50000'], '/data')).toEqual({
      originUrl: 'http://o:1',
      port: 0,
      honourQueryCmcd: false,
      logFile: '/data/x.jsonl',
      maxRateKbps: 50_000,
    });
    expect(refusal(() => parseEdgeCli([]))).toMatch(/^SAMMY_EDGE_BAD_ARGS: --origin URL is required/);
    expect(refusal(() => parseEdgeCli(['--origin', 'http://o', '--port', 'x']))).toBe('SAMMY_EDGE_INVALID_OPTION: invalid --port: "x" (accepted: a number)');
    expect(refusal(() => parseEdgeCli(['--origin', 'http://o', '--query-cmcd', 'yes']))).toBe('SAMMY_EDGE_INVALID_OPTION: invalid --query-cmcd: "yes" (accepted: on, off)');
    expect(refusal(() => parseEdgeCli(['--origin', 'http://o', '--burst-packets', '4']))).toMatch(/^SAMMY_EDGE_BAD_ARGS: Unknown option '--burst-packets'/);
  });
});

describe('the Traffic Server configuration', () => {
  const layout = atsLayout('/tmp/sammy-edge-x');
  const files = atsConfigFiles(layout, '/cache/sammy_edge.so', resolveEdgeOptions({ originUrl: 'http://10.0.0.1:8080', host: '10.0.0.2', port: 8081, minRateKbps: 200, honourQueryCmcd: false }));

  test('one remap rule to the origin, with the plugin and its options', () => {
    expect(files['etc/remap.config']).toBe('map / http://10.0.0.1:8080/ @plugin=/cache/sammy_edge.so @pparam=--min-rate-kbps=200 @pparam=--max-rate-kbps=10000000 @pparam=--query-cmcd=off @pparam=--spiral-guard=on @pparam=--spiral-guard-multiplier=2.5\n');
  });

  test('the port, the cache and the logs stay in the folder', () => {
    expect(files['etc/records.config']).toContain('CONFIG proxy.config.http.server_ports STRING 8081:ip-in=10.0.0.2\n');
    expect(files['etc/storage.config']).toBe('/tmp/sammy-edge-x/cache 256M\n');
    expect(files['runroot.yaml']).toContain('logdir: /tmp/sammy-edge-x/log\n');
    expect(files['runroot.yaml']).toContain('sysconfdir: /tmp/sammy-edge-x/etc\n');
    expect(layout.telemetryLog).toBe('/tmp/sammy-edge-x/log/sammy_edge.log');
  });

  test('port descriptors for one address or all', () => {
    expect(portDescriptor('0.0.0.0', 80)).toBe('80');
    expect(portDescriptor('::', 80)).toBe('80:ipv6');
    expect(portDescriptor('::1', 80)).toBe('80:ipv6:ip-in=::1');
    expect(portDescriptor('127.0.0.1', 80)).toBe('80:ip-in=127.0.0.1');
  });
});

describe('leftover folders', () => {
  test("a dead edge's folder is removed, a live one's and other folders are kept", () => {
    const dir = mkdtempSync(join(tmpdir(), 'sammy-edge-sweep-'));
    try {
      // A pid above the kernel's pid_max is never alive.
      for (const name of ['sammy-edge-99999999-abc', `sammy-edge-${process.pid}-def`, 'sammy-edge-xyz', 'other']) mkdirSync(join(dir, name));
      expect(removeStaleFolders(dir)).toEqual(['sammy-edge-99999999-abc']);
      expect(readdirSync(dir).sort()).toEqual(['other', `sammy-edge-${process.pid}-def`, 'sammy-edge-xyz'].sort());
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
