/** The sweep's outputs: a markdown table (the Pareto rows) and an SVG scatter plot (thesis Fig. 2.5). */
import type { SammyConfig } from '../core.js';
import { linkEfficiencyLine } from '../corpus/report.js';
import { GRID_ALIASES } from './grid.js';
import type { SweepResult, SweepRow } from './sweep.js';

const SHORT: Record<string, string> = Object.fromEntries(Object.entries(GRID_ALIASES).map(([alias, key]) => [key, alias]));

function paramText(params: Partial<SammyConfig>): string {
  return Object.entries(params)
    .map(([k, v]) => `${SHORT[k] ?? k}=${v}`)
    .join(' ');
}

const signed = (x: number, digits: number): string => `${x >= 0 ? '+' : ''}${x.toFixed(digits)}`;

export interface ReportContext {
  traces: string[];
  ladder: string;
  durationS: number;
  maxBufferS: number;
  grid: string;
  /** Each trace ran at each of these link efficiencies (trace.ts atLinkEfficiency). */
  linkEfficiencies: readonly number[];
}

export function markdownTable(result: SweepResult, keys: (keyof SammyConfig)[], rowsOf: (r: SweepResult) => SweepRow[] = paretoRows): string {
  const header = [...keys.map((k) => SHORT[k] ?? k), 'chunk throughput', 'SSIM', 'bitrate', 'rebuffers (n / s)', 'play delay', 'switches / 10 min', 'link filled', 'neighbour delay', 'traces missing the bar', ''];
  const line = (r: SweepRow, label: string): string =>
    `| ${[
      ...keys.map((k) => (r.arm === 'sammy' ? String(r.params[k]) : '')),
      `${signed(r.chunkThroughputChangePct, 1)}%`,
      `${signed(r.qualityChangePct, 3)}%`,
      `${signed(r.bitrateChangePct, 2)}%`,
      `${r.rebufferCount} / ${r.rebufferS.toFixed(1)}`,
      `${r.meanPlayDelayS.toFixed(2)} s`,
      r.meanSwitchesPer10Min.toFixed(1),
      r.arm === 'control' ? '–' : `${signed(r.linkFilledChangePct, 1)}%`,
      r.neighbourDelayQueues.toFixed(3),
      String(r.barMissTraces),
      label,
    ].join(' | ')} |`;
  const rows = [
    `| ${header.join(' | ')} |`,
    `|${header.map(() => ' --- ').join('|')}|`,
    line(result.control, 'control (dash.js default ABR)'),
    line(result.fixed4x, 'fixed4x (control + 4x top bitrate pace)'),
    ...rowsOf(result).map((r) => line(r, r.isDefault ? `${label(r)}, **default**` : label(r))),
  ];
  if (!rowsOf(result).includes(result.defaultRow)) rows.push(line(result.defaultRow, `**default** (${result.defaultRow.pareto ? 'Pareto' : 'not on the front'}${result.defaultRow.eligible ? '' : '; rebuffers more than control'})`));
  return rows.join('\n');
}

const paretoRows = (r: SweepResult): SweepRow[] => r.front;
export const stablestRows = (r: SweepResult): SweepRow[] => r.stablest;
export const safestRows = (r: SweepResult): SweepRow[] => r.safest;
export const quietestRows = (r: SweepResult): SweepRow[] => r.quietest;
const label = (r: SweepRow): string => (r.pareto ? 'Pareto' : 'stable');

export function markdownReport(result: SweepResult, keys: (keyof SammyConfig)[], ctx: ReportContext, svgName: string): string {
  const sessions = (result.rows.length + 2) * ctx.traces.length;
  return `# Sammy parameter sweep

Chunk throughput (playing phase), quality (SSIM of played segments) and bitrate are each
the mean over the traces of the per-trace change against \`control\` on the same trace;
rebuffers and play delay are totals and means over the traces; "link filled" is the
mean change of the seconds the video's downloads ran at the link's full capacity (where
a queue in front of the link would fill and its neighbours wait); "neighbour delay" is
the mean delay of a neighbour sending a ninth of the link's mean rate behind a droptail
queue of 4 x BDP, in full queues at that mean rate (src/neighbour.ts). The Pareto front is over
(lower throughput, higher quality) among points that rebuffer no more than control.

- traces (${ctx.traces.length}): ${ctx.traces.join(', ')}
- ladder: ${ctx.ladder}; ${ctx.durationS} s of media per session; buffer target ${ctx.maxBufferS} s for every arm
- ${linkEfficiencyLine(ctx.linkEfficiencies)}
- grid: \`${ctx.grid}\` (${result.rows.length} points, ${sessions} sessions)

![trade-off](${svgName})

${markdownTable(result, keys)}

The points that miss issue 11's per-trace bar (switches at most control's + 3, rebuffer
time at most control's + 1 s, SSIM at most 0.003 below control's) on the fewest traces,
then switch least, then keep the most quality:

${markdownTable(result, keys, stablestRows)}

The same, then rebuffering least instead of switching least:

${markdownTable(result, keys, safestRows)}

The same, then filling the link least:

${markdownTable(result, keys, quietestRows)}
`;
}

const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** About 8 round ticks (1, 2 or 5 times a power of ten) spanning [lo, hi]. */
function ticks(lo: number, hi: number): number[] {
  const raw = (hi - lo) / 8;
  const power = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw)!;
  const out: number[] = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi + 1e-9; t += step) out.push(Math.abs(t) < step / 1e6 ? 0 : t);
  return out;
}

function padded(values: number[]): [number, number] {
  const lo = Math.min(...values);
  const hi = Math.max(...values);
  const pad = Math.max((hi - lo) * 0.08, 1e-3);
  return [lo - pad, hi + pad];
}

export function svgPlot(result: SweepResult, title: string): string {
  const W = 820;
  const H = 520;
  const m = { left: 80, right: 30, top: 64, bottom: 60 };
  const all = [...result.rows, result.control, result.fixed4x];
  const [x0, x1] = padded(all.map((r) => r.chunkThroughputChangePct));
  const [y0, y1] = padded(all.map((r) => r.qualityChangePct));
  const sx = (x: number): number => m.left + ((x - x0) / (x1 - x0)) * (W - m.left - m.right);
  const sy = (y: number): number => H - m.bottom - ((y - y0) / (y1 - y0)) * (H - m.top - m.bottom);
  const f = (n: number): string => n.toFixed(1);
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${W / 2}" y="24" text-anchor="middle" font-size="15">${esc(title)}</text>`,
  ];
  for (const t of ticks(x0, x1)) {
    out.push(`<line x1="${f(sx(t))}" y1="${m.top}" x2="${f(sx(t))}" y2="${H - m.bottom}" stroke="#eee"/>`);
    out.push(`<text x="${f(sx(t))}" y="${H - m.bottom + 16}" text-anchor="middle">${t}</text>`);
  }
  for (const t of ticks(y0, y1)) {
    out.push(`<line x1="${m.left}" y1="${f(sy(t))}" x2="${W - m.right}" y2="${f(sy(t))}" stroke="#eee"/>`);
    out.push(`<text x="${m.left - 6}" y="${f(sy(t) + 4)}" text-anchor="end">${Number(t.toPrecision(6))}</text>`);
  }
  out.push(`<rect x="${m.left}" y="${m.top}" width="${W - m.left - m.right}" height="${H - m.top - m.bottom}" fill="none" stroke="#333"/>`);
  out.push(`<text x="${(m.left + W - m.right) / 2}" y="${H - 18}" text-anchor="middle">change in playing-phase chunk throughput vs control (%)</text>`);
  out.push(`<text transform="translate(20 ${(m.top + H - m.bottom) / 2}) rotate(-90)" text-anchor="middle">change in quality (SSIM) vs control (%)</text>`);
  for (const r of result.rows) {
    if (r.pareto) continue;
    const style = r.eligible ? 'fill="#9ecae1" fill-opacity="0.6" stroke="none"' : 'fill="none" stroke="#aaa"';
    out.push(`<circle cx="${f(sx(r.chunkThroughputChangePct))}" cy="${f(sy(r.qualityChangePct))}" r="3" ${style}><title>${esc(paramText(r.params))}</title></circle>`);
  }
  const front = result.front;
  if (front.length > 1) {
    out.push(`<polyline fill="none" stroke="#08519c" stroke-width="1.5" points="${front.map((r) => `${f(sx(r.chunkThroughputChangePct))},${f(sy(r.qualityChangePct))}`).join(' ')}"/>`);
  }
  for (const r of front) {
    out.push(`<circle cx="${f(sx(r.chunkThroughputChangePct))}" cy="${f(sy(r.qualityChangePct))}" r="4.5" fill="#08519c"><title>${esc(paramText(r.params))}</title></circle>`);
  }
  const d = result.defaultRow;
  const dx = sx(d.chunkThroughputChangePct);
  const dy = sy(d.qualityChangePct);
  out.push(`<path d="M ${f(dx)} ${f(dy - 8)} L ${f(dx + 8)} ${f(dy)} L ${f(dx)} ${f(dy + 8)} L ${f(dx - 8)} ${f(dy)} Z" fill="#d62728" stroke="white"/>`);
  out.push(`<text x="${f(dx + 11)}" y="${f(dy - 8)}" fill="#d62728" stroke="white" stroke-width="4" paint-order="stroke">default ${esc(paramText(d.params))}</text>`);
  const fx = sx(result.fixed4x.chunkThroughputChangePct);
  const fy = sy(result.fixed4x.qualityChangePct);
  out.push(`<path d="M ${f(fx)} ${f(fy - 8)} L ${f(fx + 7)} ${f(fy + 5)} L ${f(fx - 7)} ${f(fy + 5)} Z" fill="#ff7f0e"/>`);
  out.push(`<text x="${f(fx + 10)}" y="${f(fy + 4)}" fill="#ff7f0e" stroke="white" stroke-width="4" paint-order="stroke">fixed4x (control + 4x pace)</text>`);
  const cx = sx(0);
  const cy = sy(0);
  out.push(`<rect x="${f(cx - 5)}" y="${f(cy - 5)}" width="10" height="10" fill="#222"/>`);
  out.push(`<text x="${f(cx - 9)}" y="${f(cy - 9)}" text-anchor="end">control</text>`);
  const legend: [string, string][] = [
    ['<circle cx="8" cy="0" r="4.5" fill="#08519c"/>', 'Pareto front'],
    ['<circle cx="8" cy="0" r="3" fill="#9ecae1"/>', 'other grid points'],
    ['<circle cx="8" cy="0" r="3" fill="none" stroke="#aaa"/>', 'rebuffers more than control'],
  ];
  // One row in the top margin, clear of the points.
  legend.forEach(([mark, label], i) => {
    out.push(`<g transform="translate(${m.left + i * 190} 46)">${mark}<text x="18" y="4">${label}</text></g>`);
  });
  out.push('</svg>');
  return out.join('\n') + '\n';
}
