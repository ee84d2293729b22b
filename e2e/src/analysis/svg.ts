/**
 * Small, dependency-free SVG charts for the lab report: lines over time and bars
 * with 95% confidence whiskers.
 */

export const ARM_COLORS: Record<string, string> = {
  control: '#d62728',
  sammy: '#1f77b4',
  fixed4x: '#2ca02c',
  'dashjs-rtp': '#9467bd',
};
const FALLBACK_COLORS = ['#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf'];

export function colorFor(name: string, index: number): string {
  return ARM_COLORS[name] ?? FALLBACK_COLORS[index % FALLBACK_COLORS.length]!;
}

export interface Series {
  name: string;
  points: Array<[number, number]>;
  color?: string;
}

const W = 640;
const H = 300;
const M = { left: 60, right: 120, top: 30, bottom: 45 };

function esc(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** Round tick steps (1, 2, 5 x 10^k) covering [lo, hi] with about `count` ticks. */
export function ticks(lo: number, hi: number, count = 5): number[] {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((k) => k * mag).find((s) => s >= raw)!;
  const out: number[] = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(Number(v.toPrecision(12)));
  return out;
}

function fmt(v: number): string {
  return Math.abs(v) >= 1000 || Number.isInteger(v) ? String(Math.round(v)) : String(Number(v.toPrecision(3)));
}

function frame(title: string, xLabel: string, yLabel: string, xs: number[], ys: number[], x: (v: number) => number, y: (v: number) => number, xTicks = true): string {
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="11">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${W / 2 - M.right / 2}" y="18" text-anchor="middle" font-size="13">${esc(title)}</text>`,
    `<line x1="${M.left}" y1="${H - M.bottom}" x2="${W - M.right}" y2="${H - M.bottom}" stroke="black"/>`,
    `<line x1="${M.left}" y1="${M.top}" x2="${M.left}" y2="${H - M.bottom}" stroke="black"/>`,
    `<text x="${(M.left + W - M.right) / 2}" y="${H - 8}" text-anchor="middle">${esc(xLabel)}</text>`,
    `<text transform="translate(14 ${(M.top + H - M.bottom) / 2}) rotate(-90)" text-anchor="middle">${esc(yLabel)}</text>`,
  ];
  if (xTicks) for (const t of xs) parts.push(`<line x1="${x(t)}" y1="${H - M.bottom}" x2="${x(t)}" y2="${H - M.bottom + 4}" stroke="black"/><text x="${x(t)}" y="${H - M.bottom + 16}" text-anchor="middle">${fmt(t)}</text>`);
  for (const t of ys) parts.push(`<line x1="${M.left - 4}" y1="${y(t)}" x2="${W - M.right}" y2="${y(t)}" stroke="#ddd"/><text x="${M.left - 6}" y="${y(t) + 4}" text-anchor="end">${fmt(t)}</text>`);
  return parts.join('\n');
}

function legend(names: Array<{ name: string; color: string }>): string {
  return names
    .map((s, i) => `<rect x="${W - M.right + 12}" y="${M.top + i * 18}" width="12" height="3" fill="${s.color}"/><text x="${W - M.right + 30}" y="${M.top + i * 18 + 5}">${esc(s.name)}</text>`)
    .join('\n');
}

export function lineChart(o: { title: string; xLabel: string; yLabel: string; series: Series[]; yMin?: number; step?: boolean }): string {
  const all = o.series.flatMap((s) => s.points);
  const xMax = Math.max(1, ...all.map((p) => p[0]));
  const xMin = Math.min(0, ...all.map((p) => p[0]));
  const yMax = Math.max(1e-9, ...all.map((p) => p[1])) * 1.05;
  const yMin = o.yMin ?? 0;
  const x = (v: number) => M.left + ((v - xMin) / (xMax - xMin)) * (W - M.left - M.right);
  const y = (v: number) => H - M.bottom - ((v - yMin) / (yMax - yMin)) * (H - M.top - M.bottom);
  const colored = o.series.map((s, i) => ({ ...s, color: s.color ?? colorFor(s.name, i) }));
  const lines = colored.map((s) => {
    const pts = s.points.map(([px, py]) => `${x(px).toFixed(1)},${y(py).toFixed(1)}`).join(' ');
    return `<polyline fill="none" stroke="${s.color}" stroke-width="1.5" points="${pts}"/>`;
  });
  return [frame(o.title, o.xLabel, o.yLabel, ticks(xMin, xMax), ticks(yMin, yMax), x, y), ...lines, legend(colored), '</svg>'].join('\n');
}

export interface Bar {
  name: string;
  value: number | null;
  ci95: [number, number] | null;
  color?: string;
}

export function barChart(o: { title: string; yLabel: string; bars: Bar[] }): string {
  const tops = o.bars.flatMap((b) => [b.value ?? 0, b.ci95?.[1] ?? 0]);
  const yMax = Math.max(1e-9, ...tops) * 1.1;
  const y = (v: number) => H - M.bottom - (v / yMax) * (H - M.top - M.bottom);
  const slot = (W - M.left - M.right) / Math.max(1, o.bars.length);
  const x = (i: number) => M.left + slot * (i + 0.5);
  const parts = [frame(o.title, '', o.yLabel, [], ticks(0, yMax), x, y, false)];
  o.bars.forEach((b, i) => {
    const color = b.color ?? colorFor(b.name, i);
    const cx = x(i);
    const bw = slot * 0.5;
    parts.push(`<text x="${cx}" y="${H - M.bottom + 16}" text-anchor="middle">${esc(b.name)}</text>`);
    if (b.value === null) return;
    parts.push(`<rect x="${(cx - bw / 2).toFixed(1)}" y="${y(b.value).toFixed(1)}" width="${bw.toFixed(1)}" height="${(H - M.bottom - y(b.value)).toFixed(1)}" fill="${color}"/>`);
    parts.push(`<text x="${cx}" y="${(y(b.value) - 4).toFixed(1)}" text-anchor="middle">${fmt(b.value)}</text>`);
    if (b.ci95) {
      const [lo, hi] = b.ci95;
      parts.push(`<line x1="${cx}" y1="${y(Math.max(0, lo)).toFixed(1)}" x2="${cx}" y2="${y(hi).toFixed(1)}" stroke="black"/>`);
      for (const v of [Math.max(0, lo), hi]) parts.push(`<line x1="${cx - 6}" y1="${y(v).toFixed(1)}" x2="${cx + 6}" y2="${y(v).toFixed(1)}" stroke="black"/>`);
    }
  });
  parts.push('</svg>');
  return parts.join('\n');
}

export interface IntervalPoint {
  x: number;
  y: number | null;
  ci95: [number, number] | null;
}

export interface IntervalSeries {
  name: string;
  points: IntervalPoint[];
  color?: string;
}

/** A horizontal reference with its interval, drawn as a dashed line over a shaded band (the TTE in a bias plot). */
export interface Band {
  name: string;
  y: number | null;
  ci95: [number, number] | null;
  color?: string;
}

/**
 * Estimates with 95% whiskers against x (a treatment share, a round), beside reference
 * bands, on an axis that holds negative values: the IMC 2021 paper's bias plot (the A/B
 * estimate at each share against the total treatment effect). `xTicks` names
 * categorical positions.
 */
export function intervalPlot(o: { title: string; xLabel: string; yLabel: string; series: IntervalSeries[]; bands?: Band[]; xRange?: [number, number]; xTicks?: Array<[number, string]> }): string {
  const bands = o.bands ?? [];
  const ys = [
    0,
    ...o.series.flatMap((s) => s.points.flatMap((p) => [p.y, ...(p.ci95 ?? [])])),
    ...bands.flatMap((b) => [b.y, ...(b.ci95 ?? [])]),
  ].filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
  const span = Math.max(1e-9, Math.max(...ys) - Math.min(...ys));
  const yMin = Math.min(...ys) - span * 0.05;
  const yMax = Math.max(...ys) + span * 0.05;
  const xs = o.series.flatMap((s) => s.points.map((p) => p.x));
  const [xLo, xHi] = o.xRange ?? [Math.min(0, ...xs), Math.max(1, ...xs)];
  const pad = (xHi - xLo) * 0.05 || 0.5;
  const x = (v: number) => M.left + ((v - (xLo - pad)) / (xHi - xLo + 2 * pad)) * (W - M.left - M.right);
  const y = (v: number) => H - M.bottom - ((v - yMin) / (yMax - yMin)) * (H - M.top - M.bottom);
  const parts = [frame(o.title, o.xLabel, o.yLabel, o.xTicks ? [] : ticks(xLo, xHi), ticks(yMin, yMax), x, y, !o.xTicks)];
  for (const [v, label] of o.xTicks ?? []) parts.push(`<text x="${x(v).toFixed(1)}" y="${H - M.bottom + 16}" text-anchor="middle">${esc(label)}</text>`);
  parts.push(`<line x1="${M.left}" y1="${y(0).toFixed(1)}" x2="${W - M.right}" y2="${y(0).toFixed(1)}" stroke="#888"/>`);
  const named: Array<{ name: string; color: string }> = [];
  bands.forEach((b, i) => {
    const color = b.color ?? FALLBACK_COLORS[(i + 2) % FALLBACK_COLORS.length]!;
    named.push({ name: b.name, color });
    if (b.y === null) return;
    if (b.ci95) parts.push(`<rect x="${M.left}" y="${y(b.ci95[1]).toFixed(1)}" width="${W - M.left - M.right}" height="${Math.max(0.5, y(b.ci95[0]) - y(b.ci95[1])).toFixed(1)}" fill="${color}" fill-opacity="0.15"/>`);
    parts.push(`<line x1="${M.left}" y1="${y(b.y).toFixed(1)}" x2="${W - M.right}" y2="${y(b.y).toFixed(1)}" stroke="${color}" stroke-width="1.5" stroke-dasharray="6 4"/>`);
  });
  o.series.forEach((s, i) => {
    const color = s.color ?? colorFor(s.name, i);
    named.push({ name: s.name, color });
    for (const p of s.points) {
      if (p.y === null) continue;
      const cx = x(p.x).toFixed(1);
      if (p.ci95) {
        parts.push(`<line x1="${cx}" y1="${y(p.ci95[0]).toFixed(1)}" x2="${cx}" y2="${y(p.ci95[1]).toFixed(1)}" stroke="${color}"/>`);
        for (const v of p.ci95) parts.push(`<line x1="${(x(p.x) - 5).toFixed(1)}" y1="${y(v).toFixed(1)}" x2="${(x(p.x) + 5).toFixed(1)}" y2="${y(v).toFixed(1)}" stroke="${color}"/>`);
      }
      parts.push(`<circle cx="${cx}" cy="${y(p.y).toFixed(1)}" r="4" fill="${color}"/>`);
    }
  });
  parts.push(legend(named), '</svg>');
  return parts.join('\n');
}

/** A diverging colour for a share of the fair share: 1 (fair) white, below it red (starved), above it blue (takes more). */
export function shareColor(v: number | null): string {
  if (v === null || !Number.isFinite(v)) return '#eeeeee';
  const t = Math.max(-1, Math.min(1, Math.log2(v)));
  const mix = (a: number) => Math.round(255 - (255 - a) * Math.abs(t));
  return t < 0 ? `rgb(255,${mix(60)},${mix(60)})` : `rgb(${mix(40)},${mix(110)},255)`;
}

/** A matrix of values (rows against columns), each cell coloured by `color` and labelled. */
export function heatmap(o: { title: string; rowLabel: string; colLabel: string; rows: string[]; cols: string[]; values: Array<Array<number | null>>; color: (v: number | null) => string; format: (v: number | null) => string }): string {
  const left = 110;
  const top = 60;
  const cell = Math.min(90, Math.floor((W - left - 20) / Math.max(1, o.cols.length)));
  const height = top + cell * o.rows.length + 30;
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${height}" viewBox="0 0 ${W} ${height}" font-family="sans-serif" font-size="11">`,
    `<rect width="${W}" height="${height}" fill="white"/>`,
    `<text x="${W / 2}" y="18" text-anchor="middle" font-size="13">${esc(o.title)}</text>`,
    `<text x="${left + (cell * o.cols.length) / 2}" y="36" text-anchor="middle">${esc(o.colLabel)}</text>`,
    `<text transform="translate(14 ${top + (cell * o.rows.length) / 2}) rotate(-90)" text-anchor="middle">${esc(o.rowLabel)}</text>`,
  ];
  o.cols.forEach((c, j) => parts.push(`<text x="${left + cell * (j + 0.5)}" y="${top - 6}" text-anchor="middle">${esc(c)}</text>`));
  o.rows.forEach((r, i) => {
    parts.push(`<text x="${left - 6}" y="${top + cell * (i + 0.5) + 4}" text-anchor="end">${esc(r)}</text>`);
    o.cols.forEach((_, j) => {
      const v = o.values[i]?.[j] ?? null;
      parts.push(`<rect x="${left + cell * j}" y="${top + cell * i}" width="${cell}" height="${cell}" fill="${o.color(v)}" stroke="white"/>`);
      parts.push(`<text x="${left + cell * (j + 0.5)}" y="${top + cell * (i + 0.5) + 4}" text-anchor="middle">${esc(o.format(v))}</text>`);
    });
  });
  parts.push('</svg>');
  return parts.join('\n');
}
