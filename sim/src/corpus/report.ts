/** The corpus comparison as markdown: one row per trace, then the mean over traces. */
import { BAR, type ArmFigures, type CorpusResult, type TraceComparison } from './compare.js';

const signed = (x: number, digits: number): string => `${x >= 0 ? '+' : ''}${x.toFixed(digits)}`;
export const num = (x: number | null, digits: number): string => (x === null ? 'n/a' : x.toFixed(digits));

type Change = 'diff' | 'pct';

interface Column {
  title: string;
  pick: (f: ArmFigures) => number | null;
  digits: number;
  /** How Sammy's change against control is shown. */
  change: Change;
  changeDigits: number;
}

const COLUMNS: readonly Column[] = [
  { title: 'switches / 10 min', pick: (f) => f.switchesPer10Min, digits: 0, change: 'diff', changeDigits: 0 },
  { title: 'rebuffer s', pick: (f) => f.rebufferS, digits: 1, change: 'diff', changeDigits: 1 },
  { title: 'bitrate kbps', pick: (f) => f.avgBitrateKbps, digits: 0, change: 'pct', changeDigits: 1 },
  { title: 'SSIM', pick: (f) => f.avgQuality, digits: 4, change: 'diff', changeDigits: 4 },
  { title: 'play delay s', pick: (f) => f.playDelayS, digits: 2, change: 'diff', changeDigits: 2 },
  { title: 'chunk throughput kbps', pick: (f) => f.chunkThroughputKbps, digits: 0, change: 'pct', changeDigits: 1 },
  { title: 'link filled s', pick: (f) => f.linkFilledS, digits: 0, change: 'pct', changeDigits: 1 },
  { title: 'neighbour delay (queues)', pick: (f) => f.neighbourDelayQueues, digits: 3, change: 'pct', changeDigits: 1 },
];

function changeText(col: Column, sammy: number | null, control: number | null): string {
  if (sammy === null || control === null) return 'n/a';
  if (col.change === 'diff') return signed(sammy - control, col.changeDigits);
  return control > 0 ? `${signed(100 * (sammy / control - 1), col.changeDigits)}%` : 'n/a';
}

/** `sammy / control / fixed4x (sammy's change against control)` */
function cell(col: Column, arms: Record<'sammy' | 'control' | 'fixed4x', ArmFigures>): string {
  const [s, c, f] = [col.pick(arms.sammy), col.pick(arms.control), col.pick(arms.fixed4x)];
  return `${num(s, col.digits)} / ${num(c, col.digits)} / ${num(f, col.digits)} (${changeText(col, s, c)})`;
}

function row(name: string, arms: TraceComparison['arms'], verdict: string): string {
  return `| ${[name, ...COLUMNS.map((col) => cell(col, arms)), verdict].join(' | ')} |`;
}

export function corpusTable(result: CorpusResult): string {
  const header = ['trace', ...COLUMNS.map((c) => c.title), 'bar'];
  const lines = [`| ${header.join(' | ')} |`, `|${header.map(() => ' --- ').join('|')}|`];
  for (const t of result.traces) lines.push(row(t.trace, t.arms, t.misses.length === 0 ? 'ok' : `**misses ${t.misses.join(', ')}**`));
  lines.push(row(`**mean of ${result.traces.length} traces**`, result.mean, `${result.traces.length - result.failing.length}/${result.traces.length} ok`));
  return lines.join('\n');
}

export interface CorpusReportContext {
  command: string;
  ladder: string;
  durationS: number;
  maxBufferS: number;
  /** Each trace ran at each of these link efficiencies (trace.ts atLinkEfficiency). */
  linkEfficiencies: readonly number[];
}

/** The reports' line on the link efficiencies a run used. */
export function linkEfficiencyLine(efficiencies: readonly number[]): string {
  return efficiencies.length === 1 && efficiencies[0] === 1
    ? 'link efficiency 1: every download gets the trace\'s whole capacity (the fluid link)'
    : `link efficiency ${efficiencies.join(', ')}: every trace at each (a name ending in @E is the trace at efficiency E)`;
}

export function corpusReport(result: CorpusResult, ctx: CorpusReportContext): string {
  return `# Sammy against control over the corpus

Each cell is \`sammy / control / fixed4x (sammy's change against control)\`: an
absolute difference for switches, rebuffer time, SSIM and play delay, a relative one for
bitrate and chunk throughput. Chunk throughput is over playing-phase chunks (total bits /
total download time). Link filled is the seconds the video's downloads ran at the link's
full capacity, not held under it by a pace: where a queue in front of the link would
fill and its neighbours wait (relative change). Neighbour delay is the mean delay of a
neighbour sending a ninth of the link's mean rate behind a droptail queue of 4 x BDP, in
full queues at that rate (src/neighbour.ts). The bar per trace: Sammy's switches at most control's + ${BAR.extraSwitches},
rebuffer time at most control's + ${BAR.extraRebufferS} s, mean SSIM at least control's - ${BAR.ssimDrop}.

- ladder: ${ctx.ladder}; ${ctx.durationS} s of media per session; buffer target ${ctx.maxBufferS} s for every arm
- ${linkEfficiencyLine(ctx.linkEfficiencies)}
- re-render: \`${ctx.command}\`
- every parameter of every arm: \`corpus.json\` (\`config\`)

${corpusTable(result)}
`;
}
