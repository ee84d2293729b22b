/**
 * The headless player against the browser player: the same scenario run once with
 * each (`--player headless`), compared per arm on the metrics the headless player must
 * reproduce (chunk throughput, time-average bitrate, play delay), from the sessions
 * without a neighbour. `npm run lab -- --compare-players BROWSER_DIR,HEADLESS_DIR`.
 */
import type { LabResult } from './result.js';
import { markdownOf, type Block } from './report-markdown.js';
import { percentChange, type MetricSummary } from './stats.js';

export const COMPARED_METRICS = [
  ['chunkThroughputKbps', 'chunk throughput, playing phase (kbps)'],
  ['avgBitrateKbps', 'time-average bitrate (kbps)'],
  ['playDelayS', 'play delay (s)'],
] as const;

/** Within this relative difference the headless player reproduces the browser's figure. */
export const AGREEMENT_PCT = 10;

export interface PlayerComparisonRow {
  arm: string;
  metric: string;
  browser: MetricSummary | null;
  headless: MetricSummary | null;
  /** (headless - browser) / browser, %. */
  differencePct: number | null;
  within: boolean | null;
}

/** Rows per arm both runs have, for each compared metric. */
export function comparePlayers(browser: LabResult, headless: LabResult): PlayerComparisonRow[] {
  const arms = browser.config.scenario.arms.filter((a) => headless.config.scenario.arms.includes(a));
  const video = (r: LabResult, arm: string, metric: string) => r.summaryByNeighbour.none?.[arm]?.[metric] ?? r.summary[arm]?.[metric] ?? null;
  return arms.flatMap((arm) =>
    COMPARED_METRICS.map(([metric]) => {
      const b = video(browser, arm, metric);
      const h = video(headless, arm, metric);
      const differencePct = percentChange(h?.mean ?? null, b?.mean ?? null);
      return { arm, metric, browser: b, headless: h, differencePct, within: differencePct === null ? null : Math.abs(differencePct) <= AGREEMENT_PCT };
    }),
  );
}

function cell(s: MetricSummary | null): string {
  if (!s || s.mean === null) return '–';
  const f = (v: number) => (Math.abs(v) >= 100 ? v.toFixed(0) : v.toFixed(3));
  return `${f(s.mean)}${s.ci95 && s.n > 1 ? ` [${f(s.ci95[0])}, ${f(s.ci95[1])}]` : ''} (n=${s.n})`;
}

export function comparisonMarkdown(rows: PlayerComparisonRow[], browserDir: string, headlessDir: string): string {
  const label = Object.fromEntries(COMPARED_METRICS);
  const table = rows.map((r) => [
    r.arm, label[r.metric]!, cell(r.browser), cell(r.headless),
    r.differencePct === null ? '–' : `${r.differencePct >= 0 ? '+' : ''}${r.differencePct.toFixed(1)}%`,
    r.within === null ? '–' : r.within ? 'yes' : 'no',
  ]);
  const blocks: Block[] = [
    { lines: [{ prose: 'comparePlayers', slots: { browserDir, headlessDir, agreementPct: AGREEMENT_PCT } }] },
    { table: { header: ['arm', 'metric', 'browser', 'headless', 'difference', `within ${AGREEMENT_PCT}%`], rows: table } },
  ];
  return markdownOf({ title: null, sections: [{ key: 'comparison', heading: null, blocks }] });
}
