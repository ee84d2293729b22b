import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { DEFAULT_GRID_SPEC, gridPoints, parseGrid } from '../src/sweep/grid.js';
import { svgPlot } from '../src/sweep/report.js';
import { paretoFront, quietest, runSweep, safest, stablest, type SweepRow } from '../src/sweep/sweep.js';
import { constantTrace, loadTrace } from '../src/trace.js';
import { bundledTraces, labSidecar } from './helpers.js';

describe('the grid', () => {
  test('short names map to Sammy config fields; points with full > empty are dropped', () => {
    const grid = parseGrid('empty=4,11; full=2.9,6; beta=0.5');
    expect(grid).toEqual({ paceEmptyMultiplier: [4, 11], paceFullMultiplier: [2.9, 6], beta: [0.5] });
    expect(gridPoints(grid)).toEqual([
      { paceEmptyMultiplier: 4, paceFullMultiplier: 2.9, beta: 0.5 },
      { paceEmptyMultiplier: 11, paceFullMultiplier: 2.9, beta: 0.5 },
      { paceEmptyMultiplier: 11, paceFullMultiplier: 6, beta: 0.5 },
    ]);
    expect(gridPoints(parseGrid(DEFAULT_GRID_SPEC)).length).toBeGreaterThan(300);
  });

  test.each([
    ['an unknown name', 'gamma=1', /unknown grid parameter "gamma"/],
    ['a value out of range', 'beta=0,0.5', /invalid beta: 0/],
    ['a malformed entry', 'beta', /must look like name=v1,v2/],
    ['a repeated name', 'beta=0.5;beta=0.6', /given twice/],
    ['nothing', ' ; ', /grid is empty/],
  ])('rejects %s', (_name, spec, message) => {
    expect(() => parseGrid(spec)).toThrow(message);
  });
});

function fakeRow(tput: number, quality: number, eligible = true, stability = { meanSwitchesPer10Min: 0, barMissTraces: 0 }): SweepRow {
  return {
    ...stability,
    arm: 'sammy',
    params: { beta: tput },
    chunkThroughputChangePct: tput,
    qualityChangePct: quality,
    bitrateChangePct: 0,
    linkFilledChangePct: 0,
    neighbourDelayQueues: 0,
    rebufferCount: 0,
    rebufferS: 0,
    meanPlayDelayS: 0,
    eligible,
    pareto: false,
    isDefault: false,
    perTrace: [],
  };
}

describe('the Pareto front', () => {
  test('keeps the rows no other row beats on both throughput and quality, among those that rebuffer no more than control', () => {
    const a = fakeRow(-60, 0.1);
    const b = fakeRow(-50, 0.3);
    const dominated = fakeRow(-50, 0.2);
    const tie = fakeRow(-60, 0.1);
    const rebuffers = fakeRow(-70, 0.5, false);
    const front = paretoFront([b, dominated, a, rebuffers, tie]);
    expect(front).toEqual([a, tie, b]);
    expect(dominated.pareto).toBe(false);
    expect(rebuffers.pareto).toBe(false);
  });
});

describe('the rankings', () => {
  const row = (name: number, barMissTraces: number, meanSwitchesPer10Min: number, rebufferS: number, quality: number, linkFilledChangePct = 0): SweepRow => ({
    ...fakeRow(name, quality, true, { meanSwitchesPer10Min, barMissTraces }),
    rebufferS,
    linkFilledChangePct,
  });
  const rows = [row(1, 1, 2, 10, 0.5, -50), row(2, 0, 5, 30, 0.1, -10), row(3, 0, 3, 40, 0.2, -20), row(4, 0, 3, 30, 0.3, 5), row(5, 0, 3, 30, 0.2, -20)];
  const order = (list: SweepRow[]) => list.map((r) => r.chunkThroughputChangePct);

  test('stablest: fewest traces missing the bar, then fewest switches, then most quality', () => {
    expect(order(stablest(rows))).toEqual([4, 3, 5, 2, 1]);
  });

  test('safest: fewest traces missing the bar, then least rebuffering, then most quality', () => {
    expect(order(safest(rows))).toEqual([4, 5, 2, 3, 1]);
    expect(safest(rows, 2)).toHaveLength(2);
  });

  test('quietest: fewest traces missing the bar, then least time filling the link, then most quality', () => {
    expect(order(quietest(rows))).toEqual([3, 5, 2, 4, 1]);
  });
});

describe('a sweep over traces', () => {
  const traces = [constantTrace(40000), loadTrace(bundledTraces().find((p) => p.endsWith('slow-800kbps.json'))!)];
  const result = runSweep({ traces, sidecar: labSidecar, points: gridPoints(parseGrid('empty=4,11;full=1,2.9')), durationS: 120 });

  test('adds no default point the grid already has, compares against control per trace, and marks the front', () => {
    expect(result.rows).toHaveLength(4);
    expect(result.defaultRow.params).toEqual({ paceEmptyMultiplier: 11, paceFullMultiplier: 2.9 });
    expect(result.control.chunkThroughputChangePct).toBe(0);
    // Lower pace multipliers cut chunk throughput further.
    const by = (e: number, f: number) => result.rows.find((r) => r.params.paceEmptyMultiplier === e && r.params.paceFullMultiplier === f)!;
    expect(by(4, 1).chunkThroughputChangePct).toBeLessThan(by(11, 2.9).chunkThroughputChangePct);
    expect(by(11, 2.9).chunkThroughputChangePct).toBeLessThan(-20);
    expect(result.fixed4x.chunkThroughputChangePct).toBeLessThan(0);
    expect(result.front.length).toBeGreaterThan(0);
    expect(result.front.every((r) => r.pareto && r.eligible)).toBe(true);
    for (const r of result.rows) expect(r.perTrace.map((o) => o.trace)).toEqual(traces.map((t) => t.name));
  });

  test('the plot marks every point, the front, the default, fixed4x and control', () => {
    const svg = svgPlot(result, 'test <sweep>');
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg).toContain('test &lt;sweep&gt;');
    expect(svg.match(/<circle /g)!.length).toBe(result.rows.length + 3); // points + 3 legend marks
    expect(svg).toContain('default empty=11 full=2.9');
    expect(svg).toContain('fixed4x');
    expect(svg).toContain('>control<');
    expect(svg.includes('<polyline')).toBe(result.front.length > 1);
    expect(svg.match(/fill="#08519c"><title>/g)!.length).toBe(result.front.length);
  });
});

describe('npm run sim:sweep', () => {
  let out: string;
  beforeAll(() => {
    out = mkdtempSync(join(tmpdir(), 'sim-sweep-'));
  });
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  test('writes the table, the plot and every row', () => {
    const stdout = execFileSync(
      process.execPath,
      ['--import', 'tsx', 'src/cli/sweep.ts', '--grid', 'empty=6,11;full=2.9', '--duration', '60', '--out', out],
      { cwd: new URL('..', import.meta.url).pathname, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
    );
    expect(stdout).toMatch(/\| empty \| full \| chunk throughput \| SSIM/);
    expect(stdout).toContain('control (dash.js default ABR)');
    const md = readFileSync(join(out, 'sweep.md'), 'utf8');
    expect(md).toContain('![trade-off](sweep.svg)');
    const json = JSON.parse(readFileSync(join(out, 'sweep.json'), 'utf8'));
    expect(json.rows).toHaveLength(2);
    expect(json.config.traces.length).toBe(bundledTraces().length);
    expect(readFileSync(join(out, 'sweep.svg'), 'utf8')).toContain('</svg>');
  }, 60_000);

  test('--link-efficiency runs every trace at each efficiency and says so', () => {
    const dir = join(out, 'efficiency');
    execFileSync(process.execPath, ['--import', 'tsx', 'src/cli/sweep.ts', '--grid', 'empty=11', '--duration', '60', '--link-efficiency', '1,0.8', '--out', dir], {
      cwd: new URL('..', import.meta.url).pathname,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const json = JSON.parse(readFileSync(join(dir, 'sweep.json'), 'utf8'));
    const names = bundledTraces().map((f) => basename(f));
    expect(json.config.linkEfficiencies).toEqual([1, 0.8]);
    expect(json.config.traces).toEqual([...names, ...names.map((n) => `${n}@0.8`)]);
    expect(readFileSync(join(dir, 'sweep.md'), 'utf8')).toContain('link efficiency 1, 0.8: every trace at each');
  }, 60_000);

  test('names a bad grid and exits 2', () => {
    let status = 0;
    let stderr = '';
    try {
      execFileSync(process.execPath, ['--import', 'tsx', 'src/cli/sweep.ts', '--grid', 'beta=2', '--out', out], {
        cwd: new URL('..', import.meta.url).pathname,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    } catch (err) {
      status = (err as { status: number }).status;
      stderr = (err as { stderr: string }).stderr;
    }
    expect(status).toBe(2);
    expect(stderr).toMatch(/invalid beta: 2 \(accepted: a number in \(0, 1\]\)/);
  }, 60_000);
});
