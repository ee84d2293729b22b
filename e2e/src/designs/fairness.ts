/**
 * `fairness` (in the spirit of Prudentia, "Findings of an Internet Fairness
 * Watchdog"): every pair of flow kinds, a kind with itself too, shares the link at each
 * setting (rate and queue). Per flow: its throughput over the measured part of the run
 * against its max-min fair share, where a video's demand is its top bitrate times
 * `videoDemandMultiplier` (by default the Sammy core's pace at an empty buffer, 11x:
 * the fastest any arm here needs to fill its buffer, so a video that takes more than
 * that takes what it has no use for) and a bulk flow's demand is unlimited; and each
 * video's QoE. Bulk flows come from the neighbour registry (TCP with its congestion
 * control, the 3 MB HTTP loop); videos are headless player sessions.
 */
import { DEFAULT_SAMMY_CONFIG } from '@sammy/player/abr';
import type { SimArm } from '@sammy/sim/arms';
import type { Neighbour } from '../scenario/neighbour-kinds.js';
import { mean } from '../analysis/stats.js';
import { armDevice } from './common.js';
import { maxMinFair } from './estimators.js';
import type { DesignSpec } from './spec.js';
import type { DesignRun, FairnessCell, FairnessDesign, FairnessSetting, FairnessSummary, PlannedRun, DesignScenario } from './types.js';

/** A flow kind: a video session of an arm, or a process flow from the neighbour registry. */
export type FlowKind = { video: SimArm } | { neighbour: Neighbour; needs?: string };

export const FLOW_KINDS: Readonly<Record<string, FlowKind>> = {
  sammy: { video: 'sammy' },
  control: { video: 'control' },
  fixed4x: { video: 'fixed4x' },
  reno: { neighbour: { kind: 'tcp', congestionControl: 'reno', startS: 0, endS: null } },
  bbr: { neighbour: { kind: 'tcp', congestionControl: 'bbr', startS: 0, endS: null }, needs: 'bbr' },
  http: { neighbour: { kind: 'http', responseBytes: 3_000_000, gapMs: 0, startS: 0, endS: null } },
};

export function settingLabel(x: FairnessSetting): string {
  return `${x.rateMbps} Mbit/s, ${'bdp' in x.queue ? `${x.queue.bdp} BDP` : `${x.queue.bytes} B`}`;
}

/** Every unordered pair of kinds, a kind with itself included, in the listed order. */
export function pairsOf(flows: readonly string[]): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (let i = 0; i < flows.length; i++) for (let j = i; j < flows.length; j++) out.push([flows[i]!, flows[j]!]);
  return out;
}

export function fairnessRuns(d: FairnessDesign, s: DesignScenario, trial: number): PlannedRun[] {
  const playS = s.playS;
  return d.settings.flatMap((setting) =>
    pairsOf(d.flows).map(([a, b]): PlannedRun => {
      const run: PlannedRun = { label: `${settingLabel(setting)}: ${a} + ${b}`, trial, purpose: 'fairness', setting, pair: [a, b], sessions: [], flows: [], lengthS: playS };
      [a, b].forEach((kind, k) => {
        const f = FLOW_KINDS[kind]!;
        const id = `t${trial}-${setting.rateMbps}-${a}+${b}-${k}`;
        if ('video' in f) run.sessions.push({ id, arm: f.video, role: k === 0 ? 'treatment' : 'control', ...armDevice(s, f.video), startS: 0, playS, measured: true });
        else run.flows.push({ id, kind, neighbour: f.neighbour, startS: 0, durationS: playS + 1 });
      });
      return run;
    }),
  );
}

/** Each flow of a run: its kind, its throughput and its max-min fair share (Mbit/s). */
export function runShares(run: DesignRun, topBitrateKbps: number, videoDemandMultiplier: number): Array<{ kind: string; throughputMbps: number | null; fairMbps: number }> {
  const flows = [
    ...run.sessions.map((x) => ({ kind: run.pair![x.role === 'treatment' ? 0 : 1]!, throughputMbps: x.error === null ? (x.metrics.throughputMbps ?? null) : null, demand: (topBitrateKbps * videoDemandMultiplier) / 1000 })),
    ...run.flows.map((f) => ({ kind: f.kind, throughputMbps: f.error === null ? f.throughputMbps : null, demand: Infinity })),
  ];
  const fair = maxMinFair(run.setting!.rateMbps, flows.map((f) => f.demand));
  return flows.map((f, i) => ({ kind: f.kind, throughputMbps: f.throughputMbps, fairMbps: fair[i]! }));
}

export function summarizeFairness(d: FairnessDesign, runs: readonly DesignRun[], topBitrateKbps: number): FairnessSummary {
  const settings = d.settings.map(settingLabel);
  const cells: FairnessCell[] = [];
  const videoQoe: FairnessSummary['videoQoe'] = [];
  for (const setting of d.settings) {
    const label = settingLabel(setting);
    for (const [a, b] of pairsOf(d.flows)) {
      const these = runs.filter((r) => r.purpose === 'fairness' && r.setting && settingLabel(r.setting) === label && r.pair?.[0] === a && r.pair?.[1] === b);
      const shares = these.map((r) => runShares(r, topBitrateKbps, d.videoDemandMultiplier));
      // Flow a against b, and b against a (a kind with itself: both flows are "a against a").
      for (const [flow, against, k] of [[a, b, 0], [b, a, 1]] as const) {
        if (a === b && k === 1) continue;
        const mine = shares.flatMap((list) => (a === b ? list : [list[k]!]).filter((x) => x !== undefined));
        const ratios = mine.filter((x) => x.throughputMbps !== null).map((x) => x.throughputMbps! / x.fairMbps);
        cells.push({ setting: label, flow, against, shareOfFair: mean(ratios), throughputMbps: mean(mine.flatMap((x) => (x.throughputMbps === null ? [] : [x.throughputMbps]))), fairMbps: mine[0]?.fairMbps ?? 0, n: ratios.length });
        const videos = these.flatMap((r) => r.sessions.filter((x) => (a === b ? true : x.role === (k === 0 ? 'treatment' : 'control')) && x.error === null));
        if (videos.length > 0) {
          const m = (f: (x: (typeof videos)[number]) => number | null | undefined) => mean(videos.map(f).filter((v): v is number => typeof v === 'number'));
          videoQoe.push({ setting: label, flow, against, playDelayS: m((x) => x.metrics.playDelayS), rebufferS: m((x) => x.metrics.rebufferS), avgBitrateKbps: m((x) => x.metrics.avgBitrateKbps), chunkThroughputKbps: m((x) => x.metrics.chunkThroughputKbps), n: videos.length });
        }
      }
    }
  }
  return { settings, flows: d.flows, cells, videoQoe };
}

export const FAIRNESS_DESIGN: DesignSpec<FairnessDesign> = {
  description: 'every pair of flow kinds on the link at each setting: each flow\'s share of its max-min fair share, and each video\'s QoE',
  fields: ['flows', 'settings', 'videoDemandMultiplier', 'measureFromS'],
  sessionsBased: false,
  parse(o, path, c, ctx, base) {
    const flows = o.flows ?? Object.keys(FLOW_KINDS).filter((k) => k !== 'fixed4x');
    if (!Array.isArray(flows) || flows.length === 0) return c.bad(`${path}.flows`, flows, `a non-empty array of ${Object.keys(FLOW_KINDS).join(', ')}`);
    flows.forEach((f, i) => FLOW_KINDS[f as string] || c.bad(`${path}.flows[${i}]`, f, Object.keys(FLOW_KINDS).join(', ')));
    if (new Set(flows).size !== flows.length) c.bad(`${path}.flows`, flows, 'each kind at most once');
    const settings = o.settings;
    if (!Array.isArray(settings) || settings.length === 0) return c.bad(`${path}.settings`, settings, 'a non-empty array of { "rateMbps": R, "queue": { "bdp": N } | { "bytes": N } }');
    const parsed = settings.map((x, i) => {
      const p = `${path}.settings[${i}]`;
      if (typeof x !== 'object' || x === null || Array.isArray(x)) c.bad(p, x, 'an object { "rateMbps", "queue" }');
      const q = (x as Record<string, unknown>).queue ?? { bdp: 4 };
      const qo = q as Record<string, unknown>;
      const queue = typeof q === 'object' && q !== null && 'bytes' in qo ? { bytes: c.int(qo, `${p}.queue`, 'bytes', 1500, 1e9) } : { bdp: c.num(qo, `${p}.queue`, 'bdp', 0.01, 1000) };
      return { rateMbps: c.num(x as Record<string, unknown>, p, 'rateMbps', 0.1, 10_000), queue };
    });
    const measureFromS = c.num(o, path, 'measureFromS', 0, ctx.playS - 1, Math.min(5, ctx.playS / 2));
    return { design: 'fairness', flows: flows as string[], settings: parsed, videoDemandMultiplier: c.num(o, path, 'videoDemandMultiplier', 1, 1000, DEFAULT_SAMMY_CONFIG.paceEmptyMultiplier), measureFromS, seed: base.seed };
  },
  plan: fairnessRuns,
  summarize: (d, runs, ctx) => ({ metrics: {}, fairness: summarizeFairness(d, runs, ctx.topBitrateKbps) }),
};
