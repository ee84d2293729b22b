/**
 * `history` (thesis 2.5.6): a new history estimate biases an A/B test. Half the viewers
 * (treatment) start with an empty history, the other half (control) with one filled by
 * `fillRounds` unmeasured rounds of their own on this link; then every viewer plays one
 * session per round, and each session reads and writes its own viewer's history, as a
 * device does. Per round: the initial-bitrate gap (treatment vs control, the first 20 s of
 * media); over all rounds: the same estimator on every metric.
 */
import { emptyEstimates, trialsOf } from './common.js';
import { acrossTrials } from './estimators.js';
import type { DesignSpec } from './spec.js';
import { DESIGN_METRICS, type HistoryDesign, type PlannedRun, type PlannedSession, type DesignScenario } from './types.js';
import { mean } from '../analysis/stats.js';

export function historyRuns(d: HistoryDesign, s: DesignScenario, trial: number): PlannedRun[] {
  const treated = Math.round(d.sessions / 2);
  const viewers = [...Array(d.sessions).keys()].map((i) => ({ i, role: (i < treated ? 'treatment' : 'control') as 'treatment' | 'control' }));
  // Interleave the two groups in the start order, so neither always starts first.
  const order = viewers.sort((a, b) => (a.i % treated) - (b.i % treated) || a.i - b.i);
  const session = (v: (typeof viewers)[number], k: number, round: number, playS: number, reset: boolean, measured: boolean): PlannedSession => ({
    id: `t${trial}-r${round}-v${v.i}`, arm: v.role === 'treatment' ? d.treatment : d.control, role: v.role, device: `t${trial}-viewer-${v.i}`,
    resetHistory: reset, startS: k * d.staggerS, playS, measured, round,
  });
  const runs: PlannedRun[] = [];
  const control = order.filter((v) => v.role === 'control');
  for (let f = 1; f <= d.fillRounds; f++) {
    runs.push({ label: `fill-${f}`, trial, purpose: 'history-fill', sessions: control.map((v, k) => session(v, k, -f, d.fillPlayS, f === 1, false)), flows: [], lengthS: (control.length - 1) * d.staggerS + d.fillPlayS });
  }
  for (let round = 1; round <= d.rounds; round++) {
    // Treatment viewers start empty at their first round; control viewers keep what the fill rounds wrote.
    const sessions = order.map((v, k) => session(v, k, round, s.playS, round === 1 && (v.role === 'treatment' || d.fillRounds === 0), true));
    runs.push({ label: `round-${round}`, trial, purpose: 'history', sessions, flows: [], lengthS: (order.length - 1) * d.staggerS + s.playS });
  }
  return runs;
}

export const HISTORY_DESIGN: DesignSpec<HistoryDesign> = {
  description: 'treatment viewers start with an empty history, control viewers with a full one; the initial-bitrate gap over successive rounds',
  fields: ['rounds', 'fillRounds', 'fillPlayS'],
  sessionsBased: true,
  parse(o, path, c, _ctx, base) {
    if (base.sessions < 2) c.bad(`${path}.sessions`, base.sessions, 'at least 2 (a treatment and a control viewer)');
    return { ...base, design: 'history', rounds: c.int(o, path, 'rounds', 1, 100, 6), fillRounds: c.int(o, path, 'fillRounds', 0, 50, 3), fillPlayS: c.num(o, path, 'fillPlayS', 1, 600, 5) };
  },
  plan: historyRuns,
  summarize(d, runs) {
    const measured = runs.filter((r) => r.purpose === 'history');
    const empty = emptyEstimates();
    const metrics: ReturnType<DesignSpec<HistoryDesign>['summarize']>['metrics'] = {};
    const byTrial = (pick: (round: number) => boolean, metric: string) =>
      trialsOf(measured).map((trial) => {
        const sessions = measured.filter((r) => r.trial === trial).flatMap((r) => r.sessions).filter((x) => pick(x.round!));
        const vals = (role: string) => sessions.filter((x) => x.role === role && x.error === null).map((x) => (x.metrics as unknown as Record<string, number | null>)[metric]);
        return { treatment: vals('treatment'), control: vals('control') };
      });
    for (const m of DESIGN_METRICS) metrics[m] = { ...empty[m], history: acrossTrials(byTrial(() => true, m)) };
    const historyCurve = [...Array(d.rounds).keys()].map((k) => {
      const round = k + 1;
      const groups = byTrial((r) => r === round, 'initialBitrateKbps');
      const all = (side: 'treatment' | 'control') => mean(groups.flatMap((g) => g[side]).filter((v): v is number => typeof v === 'number'));
      return { round, treatmentKbps: all('treatment'), controlKbps: all('control'), ...acrossTrials(groups) };
    });
    return { metrics, historyCurve };
  },
};

