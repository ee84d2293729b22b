/**
 * npm run sim:ablation -- [--max-buffer S] [--duration S] [--json FILE] | --render FILE
 * Each rule of the Sammy core off in turn, on the test set (the held-out real traces and
 * the held-out generated family, which chose no parameter): Sammy's mean figures against
 * the full core's and control's, and how many traces miss the bar. `--json` also writes
 * the result; `--render FILE` prints the table again from such a file.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_SAMMY_CONFIG, type SammyConfig } from '../core.js';
import { compareOnCorpus, type ArmFigures } from '../corpus/compare.js';
import { num } from '../corpus/report.js';
import { CORPUS_LATENCY_MS, corpusTraces, holdoutTraces } from '../corpus/traces.js';
import { loadSidecar } from '../ladder.js';
import { DEFAULT_SESSION_DURATION_S } from '../session.js';
import { BUNDLED_LADDER, BUNDLED_TRACES, cliValues, numberOption, runMain, traceFiles, userPath } from './common.js';

/** The test set's real traces (sim/traces/held-out). */
export const HELD_OUT_TRACES = join(BUNDLED_TRACES, 'held-out');

/** One rule of the core and the parameters that turn it off. */
export interface Ablation {
  rule: string;
  off: Partial<SammyConfig>;
}

/** Every rule that a parameter turns off; the first row (no change) is the full core. */
export const ABLATIONS: readonly Ablation[] = [
  { rule: 'all rules (the defaults)', off: {} },
  { rule: 'the pace under the link', off: { linkPaceFraction: 0 } },
  { rule: 'the reserve (stability rule)', off: { bufferReserveFraction: 0 } },
  { rule: 'the cautious estimate under the reserve', off: { reserveSampleWindow: 0 } },
  { rule: 'the stalled-download rule', off: { stallAbandon: 0 } },
  { rule: 'the last-sample cap on the estimate', off: { lastSampleCapMultiplier: 1e6 } },
  { rule: 'the floor headroom', off: { floorHeadroom: 1 } },
  { rule: 'the up-switch safety (Theorem 1)', off: { upSwitchSafety: 100 } },
];

export interface AblationRow {
  rule: string;
  off: Partial<SammyConfig>;
  sammy: ArmFigures;
  failing: string[];
}

export interface AblationResult {
  command: string;
  maxBufferS: number;
  durationS: number;
  traces: string[];
  control: ArmFigures;
  rows: AblationRow[];
}

const USAGE = `usage: npm run sim:ablation -- [--max-buffer S] [--duration S] [--json FILE]
       npm run sim:ablation -- --render FILE
  each rule of the Sammy core off in turn on the test set (sim/traces/held-out and the held-out generated family)
  --max-buffer  the buffer target (default ${DEFAULT_SAMMY_CONFIG.maxBufferS} s, the player's)
  --json FILE   also write the result as JSON
  --render FILE print the table from a result written with --json`;

const signed = (x: number | null, digits: number): string => (x === null ? '' : ` (${x >= 0 ? '+' : ''}${x.toFixed(digits)})`);

interface Column {
  title: string;
  pick: (f: ArmFigures) => number | null;
  digits: number;
}

const COLUMNS: readonly Column[] = [
  { title: 'rebuffer s', pick: (f) => f.rebufferS, digits: 2 },
  { title: 'switches / 10 min', pick: (f) => f.switchesPer10Min, digits: 2 },
  { title: 'SSIM', pick: (f) => f.avgQuality, digits: 4 },
  { title: 'bitrate kbps', pick: (f) => f.avgBitrateKbps, digits: 0 },
  { title: 'link filled s', pick: (f) => f.linkFilledS, digits: 1 },
  { title: 'neighbour delay (queues)', pick: (f) => f.neighbourDelayQueues, digits: 3 },
];

/** The table: each rule off, its figures and the change from the full core; control last. */
export function ablationTable(r: AblationResult): string {
  const full = r.rows[0]!.sammy;
  const header = ['rule off', 'set', ...COLUMNS.map((c) => c.title), 'traces missing the bar'];
  const lines = [`| ${header.join(' | ')} |`, `|${header.map(() => ' --- ').join('|')}|`];
  for (const [i, row] of r.rows.entries()) {
    const cells = COLUMNS.map((c) => {
      const v = c.pick(row.sammy);
      const base = c.pick(full);
      return `${num(v, c.digits)}${i === 0 || v === null || base === null ? '' : signed(v - base, c.digits)}`;
    });
    const set = Object.keys(row.off).length === 0 ? '-' : Object.entries(row.off).map(([k, v]) => `\`${k}: ${v}\``).join(', ');
    lines.push(`| ${[i === 0 ? 'none' : row.rule, set, ...cells, `${row.failing.length} of ${r.traces.length}`].join(' | ')} |`);
  }
  lines.push(`| control (dash.js's default rules) | - | ${COLUMNS.map((c) => num(c.pick(r.control), c.digits)).join(' | ')} | - |`);
  return lines.join('\n');
}

function run(maxBufferS: number, durationS: number, command: string): AblationResult {
  const sidecar = loadSidecar(BUNDLED_LADDER);
  const traces = [
    ...corpusTraces({ files: traceFiles(HELD_OUT_TRACES), ladderKbps: [], generated: false, defaultLatencyMs: CORPUS_LATENCY_MS }),
    ...holdoutTraces(),
  ];
  let control: ArmFigures | null = null;
  const rows = ABLATIONS.map(({ rule, off }): AblationRow => {
    const result = compareOnCorpus({ traces, sidecar, durationS, arms: { maxBufferS, sammy: off } });
    control ??= result.mean.control;
    return { rule, off, sammy: result.mean.sammy, failing: result.failing };
  });
  return { command, maxBufferS, durationS, traces: traces.map((t) => t.name), control: control!, rows };
}

function main(): number {
  const values = cliValues({ 'max-buffer': { type: 'string' }, duration: { type: 'string' }, json: { type: 'string' }, render: { type: 'string' } }, USAGE);
  if (values === null) return 0;
  if (values.render !== undefined) {
    console.log(ablationTable(JSON.parse(readFileSync(userPath(values.render), 'utf8')) as AblationResult));
    return 0;
  }
  const maxBufferS = numberOption(values['max-buffer'], '--max-buffer', (n) => n > 0, 'a positive number of seconds') ?? DEFAULT_SAMMY_CONFIG.maxBufferS;
  const durationS = numberOption(values.duration, '--duration', (n) => n > 0, 'a positive number of seconds') ?? DEFAULT_SESSION_DURATION_S;
  const result = run(maxBufferS, durationS, ['npm run sim:ablation --', ...process.argv.slice(2)].join(' '));
  if (values.json !== undefined) writeFileSync(userPath(values.json), `${JSON.stringify(result, null, 1)}\n`);
  console.log(ablationTable(result));
  return 0;
}

runMain(main);
