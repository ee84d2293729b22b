/**
 * `npm run lab -- --report DIR`: the report is a function of the result file alone, so
 * rendering it again, from result.json or from result.json.gz, writes the same bytes.
 * The fixture is a small result in the format the runner writes (compact JSON).
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { gccUnavailableReason } from '../../src/lab/native.js';
import { pooledMarkdown, poolRuns } from '../../src/analysis/pool.js';
import { readResult, renderReport, RESULT_FILES } from '../../src/analysis/report.js';
import { reportExtras, writeReportFromDir } from '../../src/lab/write-report.js';

const here = dirname(fileURLToPath(import.meta.url));
const FIXTURE = join(here, 'fixtures', 'result-small.json');
const CLI = join(here, '..', '..', 'src', 'lab', 'cli.ts');

/** Every file in `dir` but the result itself, by name. */
function outputs(dir: string): Record<string, string> {
  const names = readdirSync(dir).filter((n) => !(RESULT_FILES as readonly string[]).includes(n)).sort();
  return Object.fromEntries(names.map((n) => [n, readFileSync(join(dir, n), 'utf8')]));
}

function labCli(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', CLI, ...args], { encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('re-rendering a report from its result file', () => {
  const dirs: string[] = [];
  const tempDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'sammy-lab-report-'));
    dirs.push(dir);
    return dir;
  };
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  test('rendering is deterministic: the same result renders the same report twice', () => {
    const result = JSON.parse(readFileSync(FIXTURE, 'utf8'));
    const once = renderReport(result);
    expect(renderReport(JSON.parse(readFileSync(FIXTURE, 'utf8')))).toEqual(once);
    // Rendering leaves the result as it was, so a second render of the same object agrees too.
    expect(renderReport(result)).toEqual(once);
    expect(once.markdown).toContain('# Lab report: thesis-2.6');
  });

  test('through the CLI, result.json and result.json.gz give byte-identical reports, again on a second run', async () => {
    const plain = tempDir();
    copyFileSync(FIXTURE, join(plain, 'result.json'));
    const gz = tempDir();
    writeFileSync(join(gz, 'result.json.gz'), gzipSync(readFileSync(FIXTURE)));

    const first = labCli(['--report', plain]);
    expect(first.stderr).toBe('');
    expect(first.status).toBe(0);
    const written = outputs(plain);
    expect(Object.keys(written)).toContain('report.md');
    expect(Object.keys(written)).toContain('fig-throughput.svg');

    expect(labCli(['--report', gz]).status).toBe(0);
    expect(outputs(gz)).toEqual(written);

    expect(labCli(['--report', plain]).status).toBe(0);
    expect(outputs(plain)).toEqual(written);
    // What the runner writes at the end of a run goes through the same function.
    await writeReportFromDir(gz);
    expect(outputs(gz)).toEqual(written);
  });

  test('a folder without a result: one line naming the folder and the files looked for, exit 2', () => {
    const empty = tempDir();
    const r = labCli(['--report', empty]);
    expect(r.status).toBe(2);
    expect(r.stderr).toBe(`lab: LAB_NO_RESULT: no lab result in ${empty}: looked for result.json and result.json.gz\n`);
    expect(readdirSync(empty)).toEqual([]);
  });

  test('a result file that is not a lab result is refused by name', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'result.json'), '{"trials": 3}');
    expect(() => readResult(dir)).toThrow(`${join(dir, 'result.json')} is not a lab result: it has no config.scenario or no trials`);
    writeFileSync(join(dir, 'result.json'), '{"config"');
    expect(() => readResult(dir)).toThrow(/result\.json is not a readable lab result/);
  });
});

/** Committed lab results (e2e/results/<name>/ with a result file): their reports must be what --report writes. */
const RESULTS_DIR = join(here, '..', '..', 'results');
const committed = existsSync(RESULTS_DIR)
  ? readdirSync(RESULTS_DIR).map((name) => join(RESULTS_DIR, name)).filter((dir) => RESULT_FILES.some((f) => existsSync(join(dir, f))))
  : [];

(committed.length > 0 ? describe : describe.skip)(committed.length > 0 ? 'committed results' : 'committed results (skipped: no e2e/results/*/result.json[.gz] yet)', () => {
  test.each(committed.length > 0 ? committed : ['none'])('%s: report.md and its figures are exactly what --report renders', async (dir) => {
    const result = readResult(dir);
    const extras = await reportExtras(result);
    if (extras.neighbourAlone && 'unavailable' in extras.neighbourAlone && gccUnavailableReason()) {
      console.log(`${dir}: not compared (its neighbour-alone replay needs labtools: ${extras.neighbourAlone.unavailable})`);
      return;
    }
    const { markdown, files } = renderReport(result, extras);
    expect(readFileSync(join(dir, 'report.md'), 'utf8')).toBe(markdown);
    for (const [name, svg] of Object.entries(files)) expect(readFileSync(join(dir, name), 'utf8')).toBe(svg);
    // No figure is left over from an earlier rendering.
    expect(readdirSync(dir).filter((n) => n.startsWith('fig-')).sort()).toEqual(Object.keys(files).sort());
  }, 120_000);
});

/**
 * Committed pooled comparisons (e2e/results/pooled/<name>.md; README.md beside them is
 * the notes every results directory has): each names the command that wrote it (from
 * the repository's root), and that command renders it again.
 */
const POOLED_DIR = join(RESULTS_DIR, 'pooled');
const REPOSITORY = join(here, '..', '..', '..');
const pooled = existsSync(POOLED_DIR) ? readdirSync(POOLED_DIR).filter((n) => n.endsWith('.md') && n !== 'README.md').map((n) => join(POOLED_DIR, n)) : [];

(pooled.length > 0 ? describe : describe.skip)(pooled.length > 0 ? 'committed pooled comparisons' : 'committed pooled comparisons (skipped: none in e2e/results/pooled/ yet)', () => {
  test.each(pooled.length > 0 ? pooled : ['none'])('%s: exactly what its --pool command renders', (file) => {
    const text = readFileSync(file, 'utf8');
    const command = /`npm run lab -- --pool (\S+)`/.exec(text);
    expect(command).not.toBeNull();
    const dirs = command![1]!.split(',');
    expect(pooledMarkdown(poolRuns(dirs.map((dir) => ({ dir, result: readResult(join(REPOSITORY, dir)) }))))).toBe(text);
  });
});
