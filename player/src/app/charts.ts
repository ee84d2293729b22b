/** Live charts (uPlot): the buffer, and per chunk the bitrate, the rtp sent, the rate the server applied, the measured throughput. */
import uPlot from 'uplot';
import type { ChunkRecord } from '../abr/records.js';

const WIDTH = 760;

function plot(root: HTMLElement, title: string, yLabel: string, series: uPlot.Series[], scales: uPlot.Scales): uPlot {
  const data = [[], ...series.map(() => [])] as unknown as uPlot.AlignedData;
  return new uPlot(
    {
      title,
      width: WIDTH,
      height: 220,
      scales: { x: { time: false }, ...scales },
      axes: [{ label: 's since play request' }, { label: yLabel, size: 70 }],
      series: [{ label: 't (s)' }, ...series],
    },
    data,
    root,
  );
}

export class LiveCharts {
  private readonly buffer: uPlot;
  private readonly rates: uPlot;
  private readonly bufferData: [number[], number[]] = [[], []];
  private readonly rateData: [number[], (number | null)[], (number | null)[], (number | null)[], (number | null)[]] = [[], [], [], [], []];
  private dirty = false;

  constructor(root: HTMLElement) {
    this.buffer = plot(root, 'Buffer', 's', [{ label: 'buffer (s)', stroke: '#2a6', width: 2 }], { y: { range: (_u, _min, max) => [0, Math.max(1, max * 1.1)] } });
    this.rates = plot(
      root,
      'Per video chunk',
      'kbps (log)',
      [
        { label: 'bitrate', stroke: '#333', width: 2, paths: uPlot.paths.stepped!({ align: 1 }) },
        { label: 'rtp sent', stroke: '#c33', width: 2, points: { show: true } },
        { label: 'server applied', stroke: '#e90', width: 0, points: { show: true, size: 7 } },
        { label: 'measured throughput', stroke: '#36c', width: 1, points: { show: true } },
      ],
      { y: { distr: 3 } },
    );
    setInterval(() => this.redraw(), 500);
  }

  addBuffer(tS: number, bufferS: number): void {
    this.bufferData[0].push(tS);
    this.bufferData[1].push(bufferS);
    this.dirty = true;
  }

  addChunk(c: ChunkRecord): void {
    const t = c.requestS ?? this.rateData[0].at(-1) ?? 0;
    // uPlot wants x ascending: a late response is placed at its request time.
    let i = this.rateData[0].length;
    while (i > 0 && this.rateData[0][i - 1]! > t) i--;
    const values = [t, c.bitrateKbps, c.rtpKbps, c.appliedRateKbps, c.throughputKbps] as const;
    values.forEach((v, k) => (this.rateData[k] as (number | null)[]).splice(i, 0, v));
    this.dirty = true;
  }

  private redraw(): void {
    if (!this.dirty) return;
    this.dirty = false;
    this.buffer.setData(this.bufferData as unknown as uPlot.AlignedData);
    this.rates.setData(this.rateData as unknown as uPlot.AlignedData);
  }
}
