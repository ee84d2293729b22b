import { ARMS, type SessionQoE } from '@sammy/player/abr';
import { runCli as run } from './helpers.js';

const sim = (args: string[]): ReturnType<typeof run> => run('sim', args);

describe('npm run sim', () => {
  test('--json prints one SessionQoE with its ChunkRecords', () => {
    const { status, stdout } = sim(['--trace', 'traces/step-down.json', '--arm', 'fixed4x', '--duration', '60', '--json']);
    expect(status).toBe(0);
    const lines = stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const qoe = JSON.parse(lines[0]!) as SessionQoE;
    expect(ARMS).toContain(qoe.arm);
    expect(qoe.arm).toBe('fixed4x');
    expect(qoe.chunks).toHaveLength(30);
    expect(qoe.chunks.every((c) => c.appliedRateKbps === null && c.rtpKbps === 4200)).toBe(true);
    expect(qoe.config).toMatchObject({ arm: 'fixed4x', trace: 'step-down.json', durationS: 60, paceTopMultiplier: 4 });
    for (const key of ['playDelayS', 'rebufferCount', 'rebufferS', 'avgBitrateKbps', 'avgQuality', 'switchCount', 'initialThroughputKbps', 'chunkThroughputKbps']) {
      expect(qoe).toHaveProperty(key);
    }
  }, 30_000);

  test('--trace-offset-s joins the trace that far in, and records it', () => {
    const run = (extra: string[]): SessionQoE & { config: Record<string, unknown> } => {
      const { status, stdout } = sim(['--trace', 'traces/step-down.json', '--arm', 'control', '--duration', '60', '--json', ...extra]);
      expect(status).toBe(0);
      return JSON.parse(stdout) as SessionQoE & { config: Record<string, unknown> };
    };
    const fromStart = run([]);
    // Past the step down, the whole session meets the slow link.
    const late = run(['--trace-offset-s', '600']);
    expect(fromStart.config.traceOffsetS).toBe(0);
    expect(late.config.traceOffsetS).toBe(600);
    expect(late.avgBitrateKbps).toBeLessThan(fromStart.avgBitrateKbps);
    const bad = sim(['--trace', 'constant:40000', '--trace-offset-s=-3']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/--trace-offset-s must be a non-negative number of seconds/);
  }, 30_000);

  test('--link-efficiency gives every download that share of the link, and records it', () => {
    const run = (extra: string[]): SessionQoE & { config: Record<string, unknown>; sim: { trace: string } } => {
      const { status, stdout } = sim(['--trace', 'constant:2000', '--arm', 'control', '--duration', '60', '--json', ...extra]);
      expect(status).toBe(0);
      return JSON.parse(stdout) as SessionQoE & { config: Record<string, unknown>; sim: { trace: string } };
    };
    const whole = run([]);
    const half = run(['--link-efficiency', '0.5']);
    expect(whole.config.linkEfficiency).toBe(1);
    expect(half.config.linkEfficiency).toBe(0.5);
    expect(half.sim.trace).toBe('constant:2000@0.5');
    expect(half.config.traceMeanKbps).toBeCloseTo(1000);
    // The initial chunks are unpaced: they arrive at the link's rate, now half of it.
    expect(half.initialThroughputKbps! / whole.initialThroughputKbps!).toBeCloseTo(0.5, 1);
    const bad = sim(['--trace', 'constant:2000', '--link-efficiency', '1.5']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/--link-efficiency must be a number in \(0, 1\]/);
  }, 30_000);

  test('prints QoE and smoothness for a person, and names bad options with exit code 2', () => {
    const ok = sim(['--trace', 'constant:40000', '--duration', '60', '--config', '{"beta":0.6}']);
    expect(ok.status).toBe(0);
    expect(ok.stdout).toMatch(/^sammy on constant:40000/);
    expect(ok.stdout).toMatch(/chunk throughput\s+\d+ kbps playing phase \([\d.]+x the top bitrate\)/);
    expect(ok.stdout).toMatch(/Theorem 1\s+B_end ([\d.]+) s = .* = \1 s/);
    const bad = sim(['--trace', 'constant:40000', '--config', '{"beta":2}']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/invalid beta: 2/);
    const missing = sim(['--arm', 'sammy']);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/--trace is required/);
  }, 30_000);
});

describe('npm run sim:corpus', () => {
  test('--link-efficiency runs every trace at each efficiency; a repeated one is refused', () => {
    const { status, stdout } = run('corpus', ['--files-only', '--duration', '60', '--link-efficiency', '1,0.7', '--json']);
    expect(status).toBe(0);
    const names = (JSON.parse(stdout) as { traces: { trace: string }[] }).traces.map((t) => t.trace);
    const plain = names.filter((n) => !n.endsWith('@0.7'));
    expect(plain.length).toBeGreaterThan(0);
    expect(names).toEqual([...plain, ...plain.map((n) => `${n}@0.7`)]);
    const bad = run('corpus', ['--files-only', '--link-efficiency', '0.7,0.7']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/--link-efficiency lists an efficiency twice/);
  }, 60_000);
});
