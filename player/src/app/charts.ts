/**
 * Live charts (uPlot): the video's download rate over time (this session's and, with
 * `compare`, the compared session's, on one scale), per chunk the bitrate, the rtp sent,
 * the rate the server applied and the measured throughput, and the buffer. Each legend
 * shows the latest values unless the cursor is over its chart.
 */
import uPlot from 'uplot';
import type { ChunkRecord } from '../abr/records.js';
import { chunkScales, latestIndex, logTicks, rateRange, shortKbps, type RateSeries } from './chart-data.js';

const WIDTH = 760;
const X_LABEL = 's since play request';
/** Every chart's time axis starts at the play request. */
const X_SCALE: uPlot.Scale = { time: false, range: (_u, _min, max) => [0, Math.max(1, max)] };
const T_SERIES: uPlot.Series = { label: 't (s)', value: (_u, v) => (v === null ? '–' : v.toFixed(1)) };
/** A log kbps axis with ticks at 1, 2 and 5 times the powers of 10, labelled short. */
const logAxis = (scale: string, label: string, side: 1 | 3 = 3): uPlot.Axis => ({
  scale,
  side,
  label,
  size: 55,
  splits: (u) => logTicks(u.scales[scale]!.min!, u.scales[scale]!.max!),
  // uPlot's own filter for log axes blanks every tick but the powers of 10.
  filter: (_u, ticks) => ticks,
  values: (_u, ticks) => ticks.map(shortKbps),
  ...(side === 1 ? { grid: { show: false } } : {}),
});

function kbps(v: number | null | undefined): string {
  return v === null || v === undefined || !Number.isFinite(v) ? 'none' : `${Math.round(v).toLocaleString('en')} kbps`;
}

/** Legend values at the latest point whenever the cursor is not over the chart. */
const latestInLegend: uPlot.Hooks.Arrays = {
  setCursor: [(u) => showLatest(u)],
  setData: [(u) => showLatest(u)],
};

function showLatest(u: uPlot): void {
  if (u.cursor.idx !== null && u.cursor.idx !== undefined) return;
  const idx = latestIndex(u.data[0] ?? []);
  if (idx !== null && u.legend.idx !== idx) u.setLegend({ idx });
}

function plot(root: HTMLElement, opts: Omit<uPlot.Options, 'width' | 'height'> & { height?: number }): uPlot {
  const data = opts.series.map(() => []) as unknown as uPlot.AlignedData;
  const u = new uPlot({ width: WIDTH, height: 200, legend: { live: true }, hooks: latestInLegend, ...opts }, data, root);
  return u;
}

/** A chart of one session's video download rate (kbit/s in time bins). */
function rateChart(root: HTMLElement, title: string, range: () => [number, number]): uPlot {
  return plot(root, {
    title,
    height: 170,
    scales: { x: X_SCALE, y: { range } },
    axes: [{ label: X_LABEL }, { label: 'kbit/s', size: 55, values: (_u, ticks) => ticks.map(shortKbps) }],
    series: [
      T_SERIES,
      { label: 'video download rate', stroke: '#36c', fill: 'rgba(51,102,204,0.25)', width: 1, paths: uPlot.paths.stepped!({ align: 1 }), value: (_u, v) => kbps(v) },
      { label: 'mean of the last 10 s', stroke: '#333', width: 1, dash: [4, 3], value: (_u, v) => kbps(v) },
    ],
  });
}

export class LiveCharts {
  private readonly rate: uPlot;
  private readonly compareRate: uPlot | null;
  private readonly chunks: uPlot;
  private readonly buffer: uPlot;
  private readonly scaleNote: HTMLElement;
  private readonly bufferData: [number[], number[]] = [[], []];
  private readonly chunkData: [number[], (number | null)[], (number | null)[], (number | null)[], (number | null)[]] = [[], [], [], [], []];
  private rateData: RateSeries = { t: [], kbps: [], meanKbps: [] };
  private compareData: RateSeries = { t: [], kbps: [], meanKbps: [] };
  private rateY: [number, number] = rateRange();
  private scales = chunkScales([], []);
  private dirty = false;

  /**
   * @param rates the download-rate series of this session and, with `compareArm`, of the
   *   compared one, computed when the charts redraw
   */
  constructor(
    root: HTMLElement,
    arm: string,
    private readonly rates: () => { main: RateSeries; compare: RateSeries | null },
    compareArm: string | null,
  ) {
    this.rate = rateChart(root, `Video download rate: ${arm}`, () => this.rateY);
    this.compareRate = compareArm === null ? null : rateChart(root, `Video download rate: ${compareArm} (the session beside this one)`, () => this.rateY);
    this.chunks = plot(root, {
      title: 'Per video chunk',
      scales: { x: X_SCALE, kbps: { distr: 3, range: () => this.scales.main }, thr: { distr: 3, range: () => this.scales.throughput } },
      axes: [{ label: X_LABEL }, logAxis('kbps', 'kbit/s (log)'), logAxis('thr', 'throughput (log)', 1)],
      series: [
        T_SERIES,
        { label: 'bitrate', scale: 'kbps', stroke: '#333', width: 2, paths: uPlot.paths.stepped!({ align: 1 }), value: (_u, v) => kbps(v) },
        { label: 'rtp sent', scale: 'kbps', stroke: '#c33', width: 2, points: { show: true }, value: (_u, v) => kbps(v) },
        { label: 'server applied', scale: 'kbps', stroke: '#e90', width: 0, points: { show: true, size: 7 }, value: (_u, v) => kbps(v) },
        { label: 'measured throughput', scale: 'thr', stroke: '#36c', width: 1, points: { show: true }, value: (_u, v) => kbps(v) },
      ],
    });
    this.scaleNote = root.appendChild(document.createElement('p'));
    this.scaleNote.className = 'chart-note';
    this.buffer = plot(root, {
      title: 'Buffer',
      height: 170,
      scales: { x: X_SCALE, y: { range: (_u, _min, max) => [0, Math.max(1, max * 1.1)] } },
      axes: [{ label: X_LABEL }, { label: 's', size: 55 }],
      series: [
        T_SERIES,
        { label: 'buffer', stroke: '#2a6', width: 2, value: (_u, v) => (v === null ? '–' : `${v.toFixed(1)} s`) },
      ],
    });
    setInterval(() => this.redraw(), 500);
  }

  addBuffer(tS: number, bufferS: number): void {
    this.bufferData[0].push(tS);
    this.bufferData[1].push(bufferS);
    this.dirty = true;
  }

  addChunk(c: ChunkRecord): void {
    const t = c.requestS ?? this.chunkData[0].at(-1) ?? 0;
    // uPlot wants x ascending: a late response is placed at its request time.
    let i = this.chunkData[0].length;
    while (i > 0 && this.chunkData[0][i - 1]! > t) i--;
    const values = [t, c.bitrateKbps, c.rtpKbps, c.appliedRateKbps, c.throughputKbps] as const;
    values.forEach((v, k) => (this.chunkData[k] as (number | null)[]).splice(i, 0, v));
    this.dirty = true;
  }

  private redraw(): void {
    if (!this.dirty) return;
    this.dirty = false;
    const { main, compare } = this.rates();
    this.rateData = main;
    this.compareData = compare ?? this.compareData;
    this.rateY = rateRange(this.rateData.kbps, this.compareData.kbps);
    this.rate.setData([this.rateData.t, this.rateData.kbps, this.rateData.meanKbps]);
    this.compareRate?.setData([this.compareData.t, this.compareData.kbps, this.compareData.meanKbps]);
    const [, bitrate, rtp, applied, throughput] = this.chunkData;
    const scales = chunkScales([...bitrate, ...rtp, ...applied], throughput);
    this.scales = scales;
    this.scaleNote.textContent = scales.split
      ? 'Most measured throughputs lie far beyond the other lines (an unpaced chunk arrives at the link’s speed): the throughput has its own scale, the axis on the right.'
      : 'One scale for all four lines (both axes read the same).';
    this.chunks.setData(this.chunkData as unknown as uPlot.AlignedData);
    this.buffer.setData(this.bufferData as unknown as uPlot.AlignedData);
  }
}
