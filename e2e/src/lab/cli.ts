/**
 * npm run lab -- --scenario NAME|FILE [--arms control,sammy,fixed4x] [--trials N]
 *   [--neighbours none,udp,tcp,http,video] [--out DIR] [--calibrate-only]
 *   [--trace FILE] [--trace-start beginning|spread] [--server-cc reno|bbr]
 * npm run lab -- --report DIR
 * npm run lab -- --compare-players BROWSER_DIR,HEADLESS_DIR
 * npm run lab -- --pool DIR,DIR[,...] [--out FILE]
 */
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { exitCleanlyOnSignals, runCleanups } from './cleanup.js';
import { NEIGHBOUR_KINDS } from '../scenario/neighbour-kinds.js';
import { LabError } from '../lab-error.js';
import { ProcessError } from './processes.js';
import { comparePlayers, comparisonMarkdown } from '../analysis/compare.js';
import { pooledMarkdown, poolRuns } from '../analysis/pool.js';
import { readResult } from '../analysis/report.js';
import { loadScenario, withOverrides } from '../scenario/scenario.js';

export const USAGE = `usage: npm run lab -- --scenario NAME|FILE [--arms control,sammy,fixed4x] [--trials N]
  [--neighbours ${Object.keys(NEIGHBOUR_KINDS).join(',')}] [--out DIR] [--calibrate-only] [--player browser|headless]
  [--trace FILE] [--trace-start beginning|spread] [--server-cc reno|bbr]
  NAME is a file in e2e/scenarios/ (thesis-2.6, ci-short, cellular-lte, ...); DIR defaults to lab-results/<scenario>-<time>
  --trace FILE: a trace scenario on another trace (mahimahi or JSON steps), everything else as the scenario says
  --trace-start: where each trial's sessions start in the trace (spread: trial k of K at (k - 1) / K of it)
  --server-cc: the server namespace's congestion control instead of the scenario's server.congestionControl
  --calibrate-only: build the link and, on a trace link, measure how closely it follows the trace; no session
  --player headless: run the scenario's sessions with the headless player (src/headless/) instead of Chromium
usage: npm run lab -- --report DIR
  re-renders DIR/report.md and its figures from DIR/result.json (or DIR/result.json.gz); runs nothing else
usage: npm run lab -- --compare-players BROWSER_DIR,HEADLESS_DIR
  the same scenario run with each player: chunk throughput, bitrate and play delay per arm, side by side
usage: npm run lab -- --pool DIR,DIR[,...] [--out FILE]
  runs of the same setup pooled: every arm against control, trial by trial within each run, over all the runs' trials
  (markdown to FILE, or to the terminal)`;

function log(line: string): void {
  process.stdout.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      scenario: { type: 'string', default: 'thesis-2.6' },
      arms: { type: 'string' },
      trials: { type: 'string' },
      neighbours: { type: 'string' },
      out: { type: 'string' },
      report: { type: 'string' },
      'calibrate-only': { type: 'boolean' },
      player: { type: 'string' },
      trace: { type: 'string' },
      'trace-start': { type: 'string' },
      'server-cc': { type: 'string' },
      'compare-players': { type: 'string' },
      pool: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const cwd = process.env.INIT_CWD ?? process.cwd();
  if (values['compare-players'] !== undefined) {
    const [a, b] = values['compare-players'].split(',').map((d) => resolve(cwd, d.trim()));
    if (!a || !b) throw new LabError('LAB_BAD_ARGS', '--compare-players takes two result folders: BROWSER_DIR,HEADLESS_DIR');
    process.stdout.write(comparisonMarkdown(comparePlayers(readResult(a), readResult(b)), a, b));
    return 0;
  }
  if (values.pool !== undefined) {
    // Folders as given (relative to where npm was run), so the output reads the same on any clone.
    const dirs = values.pool.split(',').map((d) => d.trim()).filter((d) => d !== '');
    const markdown = pooledMarkdown(poolRuns(dirs.map((dir) => ({ dir, result: readResult(resolve(cwd, dir)) }))));
    if (values.out === undefined) process.stdout.write(markdown);
    else {
      writeFileSync(resolve(cwd, values.out), markdown);
      log(`wrote ${resolve(cwd, values.out)}`);
    }
    return 0;
  }
  if (values.report !== undefined) {
    const dir = resolve(cwd, values.report);
    // Loaded here: a report may replay a neighbour through labtools; --pool and --compare-players load no lab code.
    const { writeReportFromDir } = await import('./write-report.js');
    const written = await writeReportFromDir(dir);
    log(`wrote ${written.length} file(s) in ${dir}: ${written.join(', ')}`);
    return 0;
  }
  const scenarioArg = values.scenario!.endsWith('.json') ? resolve(cwd, values.scenario!) : values.scenario!;
  const trials = values.trials === undefined ? undefined : Number(values.trials);
  const scenario = withOverrides(loadScenario(scenarioArg), {
    arms: values.arms?.split(',').map((a) => a.trim()),
    trials,
    neighbours: values.neighbours?.split(',').map((a) => a.trim()),
    player: values.player,
    trace: values.trace === undefined ? undefined : resolve(cwd, values.trace),
    traceStart: values['trace-start'],
    serverCongestionControl: values['server-cc'],
  });
  const outDir = resolve(cwd, values.out ?? `lab-results/${scenario.name}-${new Date().toISOString().replace(/[:.]/g, '-').slice(0, 19)}`);
  exitCleanlyOnSignals(log);
  log(`lab ${scenario.name}: ${scenario.trials} trial(s) x ${scenario.neighbours.map((n) => n.kind).join('/')} x ${scenario.arms.join('/')} -> ${outDir}`);
  try {
    const { runLab } = await import('./runner.js');
    const result = await runLab({ scenario, outDir, log, calibrateOnly: values['calibrate-only'] === true });
    log(`wrote ${outDir}/result.json and ${outDir}/report.md`);
    return result.trials.some((t) => t.error) ? 1 : 0;
  } finally {
    await runCleanups();
  }
}

main().then(
  (code) => process.exit(code),
  async (err: unknown) => {
    const code = err instanceof LabError || err instanceof ProcessError ? err.code : 'LAB_ERROR';
    process.stderr.write(`lab: ${code}: ${(err as Error).message}\n`);
    await runCleanups();
    process.exit(2);
  },
);
