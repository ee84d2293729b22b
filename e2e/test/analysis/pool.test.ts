/**
 * `npm run lab -- --pool DIR,DIR`: runs of one setup pooled for the paired comparison.
 * Pairs stay within their run, the runs must have run the same setup, and the CLI writes
 * what pooledMarkdown renders.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pairedDifference } from '../../src/analysis/paired.js';
import { pooledMarkdown, poolRuns } from '../../src/analysis/pool.js';
import type { LabResult } from '../../src/analysis/result.js';

const here = dirname(fileURLToPath(import.meta.url));
const FIXTURE = join(here, 'fixtures', 'result-small.json');
const CLI = join(here, '..', '..', 'src', 'lab', 'cli.ts');

const load = (): LabResult => JSON.parse(readFileSync(FIXTURE, 'utf8')) as LabResult;

/** The fixture with every sammy session's chunk throughput set to `kbps(trial)`. */
function withSammyThroughput(kbps: (trial: number) => number): LabResult {
  const r = load();
  for (const t of r.trials) if (t.arm === 'sammy') (t.metrics as unknown as Record<string, number>)['chunkThroughputKbps'] = kbps(t.trial);
  return r;
}

describe('poolRuns', () => {
  test("trials are numbered on from the previous run's, so every pair is within one run", () => {
    const a = withSammyThroughput((trial) => 9000 + trial);
    const b = withSammyThroughput((trial) => 8000 + trial);
    // Run b lost control's session of trial 1: its sammy session pairs with nothing, not with run a's control.
    b.trials = b.trials.filter((t) => !(t.trial === 1 && t.arm === 'control' && t.neighbour === 'none'));
    const pool = poolRuns([{ dir: 'a', result: a }, { dir: 'b', result: b }]);
    expect(pool.result.config.scenario.trials).toBe(20);
    expect([...new Set(pool.result.trials.map((t) => t.trial))].sort((x, y) => x - y)).toEqual([1, 2, 11, 12]);
    const d = pairedDifference(pool.result.trials, 'none', 'sammy', 'chunkThroughputKbps');
    // Run a: 9001 - 36100, 9002 - 36200; run b, trial 2 only: 8002 - 36200.
    const differences = [9001 - 36100, 9002 - 36200, 8002 - 36200];
    expect(d).toMatchObject({ n: 3, lower: 3, higher: 0 });
    expect(d.mean).toBeCloseTo(differences.reduce((x, y) => x + y, 0) / 3, 9);
    expect(pool.runs.map((r) => [r.dir, r.trials, r.sessions, r.failed])).toEqual([['a', 10, 9, 1], ['b', 10, 8, 1]]);
  });

  test('runs of another setup are refused, naming what differs; the trial count, description and media folder may differ', () => {
    const a = load();
    const b = load();
    b.config.scenario = { ...b.config.scenario, trials: 5, description: 'another text' };
    (b.config as unknown as Record<string, unknown>)['media'] = { dir: '/elsewhere' };
    (a.config as unknown as Record<string, unknown>)['media'] = { dir: '/here' };
    expect(() => poolRuns([{ dir: 'a', result: a }, { dir: 'b', result: b }])).not.toThrow();

    const c = load();
    (c.config as unknown as Record<string, unknown>)['player'] = { byArm: { sammy: { linkPaceFraction: 0 } } };
    c.config.scenario = { ...c.config.scenario, arms: ['control', 'sammy', 'fixed4x'] };
    expect(() => poolRuns([{ dir: 'a', result: load() }, { dir: 'c', result: c }])).toThrow(
      'c ran another setup than a: config.player.byArm, config.scenario.arms differ; only runs of the same setup pool',
    );
    const d = load();
    d.config.scenario = { ...d.config.scenario, link: { ...d.config.scenario.link, rttMs: 41 } };
    expect(() => poolRuns([{ dir: 'a', result: load() }, { dir: 'd', result: d }])).toThrow(/config\.scenario\.link\.rttMs differs/);
  });

  test('one run is not a pool', () => {
    expect(() => poolRuns([{ dir: 'a', result: load() }])).toThrow(/two or more result folders/);
  });

  test('the markdown names the runs and the command, and has a paired table per experiment', () => {
    const md = pooledMarkdown(poolRuns([{ dir: 'x/a', result: load() }, { dir: 'x/b', result: load() }]));
    expect(md).toContain('# thesis-2.6: 2 runs pooled');
    expect(md).toContain('`npm run lab -- --pool x/a,x/b`');
    expect(md).toContain('| x/a | 2026-01-01T00:00:00Z | 2026-01-01T01:00:00Z | not recorded | 10 | 9 | 1 |');
    // A run that recorded its code (config.code) names its commit.
    const coded = load();
    (coded.config as unknown as Record<string, unknown>)['code'] = { commit: 'c07976a5'.padEnd(40, '0'), changedFiles: 0 };
    expect(pooledMarkdown(poolRuns([{ dir: 'x/a', result: load() }, { dir: 'x/c', result: coded }]))).toContain('| x/c | 2026-01-01T00:00:00Z | 2026-01-01T01:00:00Z | commit c07976a50000 | 10 | 9 | 1 |');
    // Both runs' trials 1 and 2: 9100 - 36100 and 9200 - 36200, twice.
    expect(md).toContain('| chunk throughput, playing phase (kbps) | -27000 [-27000, -27000] (n=4); lower 4, higher 0 |');
    expect(md).toContain('### udp neighbour (0–30 s after playback start)');
  });
});

describe('--pool through the CLI', () => {
  let root: string;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'sammy-lab-pool-'));
    for (const name of ['a', 'b']) {
      mkdirSync(join(root, name));
      writeFileSync(join(root, name, 'result.json'), readFileSync(FIXTURE));
    }
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  const labCli = (args: string[]) => spawnSync(process.execPath, ['--import', 'tsx', CLI, ...args], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, INIT_CWD: root } });

  test('to the terminal and to --out FILE: what pooledMarkdown renders, folders named as given', () => {
    const expected = pooledMarkdown(poolRuns([{ dir: 'a', result: load() }, { dir: 'b', result: load() }]));
    const shown = labCli(['--pool', 'a, b']);
    expect(shown.stderr).toBe('');
    expect(shown.stdout).toBe(expected);
    const written = labCli(['--pool', 'a,b', '--out', 'pooled.md']);
    expect(written.status).toBe(0);
    expect(readFileSync(join(root, 'pooled.md'), 'utf8')).toBe(expected);
  });

  test('a folder without a result, or a single folder: one line on stderr, exit 2', () => {
    const missing = labCli(['--pool', 'a,nothing']);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toBe(`lab: LAB_NO_RESULT: no lab result in ${join(root, 'nothing')}: looked for result.json and result.json.gz\n`);
    const one = labCli(['--pool', 'a']);
    expect(one.status).toBe(2);
    expect(one.stderr).toMatch(/^lab: LAB_BAD_ARGS: --pool takes two or more result folders/);
  });
});
