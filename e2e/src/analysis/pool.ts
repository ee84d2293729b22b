/**
 * Several runs of one scenario, pooled for the paired comparison: `npm run lab -- --pool
 * DIR,DIR[,...]`. A run of ten trials on a cellular trace gives a paired interval some
 * tens of milliseconds wide; the same command run again adds trials, and pairs stay
 * within their run (each session against control's of the same run, trial and
 * experiment). Only runs of the same setup pool: the scenario (all but its trial count
 * and description), each arm's player configuration, the trace, queue, RTT and the
 * server's congestion control must agree, or the pool names what differs.
 */
import { LabError } from '../lab-error.js';
import { codeOf, codeText, pairedTables } from './report.js';
import { markdownOf, type Block } from './report-markdown.js';
import type { LabResult, TrialRecord } from './result.js';

export interface PooledRun {
  dir: string;
  startedAt: string;
  finishedAt: string | null;
  complete: boolean;
  /** The code it ran (result.json's `config.code`), or null in results from before it was recorded. */
  code: string | null;
  /** Trials planned, and sessions measured and failed. */
  trials: number;
  sessions: number;
  failed: number;
}

export interface PooledRuns {
  runs: PooledRun[];
  result: LabResult;
}

/** What must agree for two runs to pool, as paths into result.json's `config` (a missing part is null). */
function setupOf(r: LabResult): Record<string, unknown> {
  const { trials: _trials, description: _description, ...scenario } = r.config.scenario;
  const link = (r.config.link ?? {}) as { trace?: { sha256?: string } | null; rttMs?: number; queueBytes?: number; serverCongestionControl?: string };
  const player = (r.config.player ?? {}) as { byArm?: unknown };
  const { dir: _dir, ...media } = (r.config.media ?? {}) as Record<string, unknown>;
  return {
    scenario,
    player: { byArm: player.byArm ?? null },
    link: { trace: { sha256: link.trace?.sha256 ?? null }, rttMs: link.rttMs ?? null, queueBytes: link.queueBytes ?? null, serverCongestionControl: link.serverCongestionControl ?? null },
    // The media folder's path is the machine's, not the setup's.
    media,
  };
}

/** Canonical JSON: objects with sorted keys, so key order does not make two setups differ. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o).sort().filter((k) => o[k] !== undefined).map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

/** Where `a` and `b` differ, as dotted paths to the first differing parts (`scenario.neighbours`), at most `limit`. */
function differences(a: unknown, b: unknown, path: string, limit = 4): string[] {
  if (canonical(a) === canonical(b)) return [];
  const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
  if (!isObject(a) || !isObject(b)) return [path];
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
  return keys.flatMap((k) => differences(a[k], b[k], path === '' ? k : `${path}.${k}`, limit)).slice(0, limit);
}

/**
 * The runs as one result: trials numbered on from the previous run's (trial k of the
 * second of two 10-trial runs is trial 10 + k), so a pair never crosses runs.
 */
export function poolRuns(runs: Array<{ dir: string; result: LabResult }>): PooledRuns {
  if (runs.length < 2) throw new LabError('LAB_BAD_ARGS', `--pool takes two or more result folders of the same scenario, comma-separated (got ${runs.length})`);
  const first = runs[0]!;
  const reference = setupOf(first.result);
  for (const { dir, result } of runs.slice(1)) {
    const setup = setupOf(result);
    const differing = differences(reference, setup, '');
    if (differing.length > 0) {
      throw new LabError('LAB_POOL_MISMATCH', `${dir} ran another setup than ${first.dir}: config.${differing.join(', config.')} differ${differing.length === 1 ? 's' : ''}; only runs of the same setup pool`);
    }
  }
  const trials: TrialRecord[] = [];
  let offset = 0;
  for (const { result } of runs) {
    for (const t of result.trials) trials.push({ ...t, trial: t.trial + offset });
    offset += Math.max(result.config.scenario.trials, ...result.trials.map((t) => t.trial));
  }
  const scenario = { ...first.result.config.scenario, trials: offset };
  return {
    runs: runs.map(({ dir, result }) => ({
      dir,
      startedAt: result.startedAt,
      finishedAt: result.finishedAt,
      complete: result.complete,
      code: codeOf(result) ? codeText(codeOf(result)!) : null,
      trials: result.config.scenario.trials,
      sessions: result.trials.length,
      failed: result.trials.filter((t) => t.error !== null).length,
    })),
    result: { ...first.result, config: { ...first.result.config, scenario }, trials },
  };
}

/** The pooled paired comparison as markdown (the report's "Paired by trial" tables over every run). */
export function pooledMarkdown(pool: PooledRuns): string {
  const s = pool.result.config.scenario;
  const tables = pairedTables(s, pool.result.trials, s.arms);
  const runs = pool.runs.map((r) => [
    r.dir, r.startedAt, `${r.finishedAt ?? '(unfinished)'}${r.complete ? '' : ' (incomplete)'}`, r.code ?? 'not recorded', String(r.trials), String(r.sessions), String(r.failed),
  ]);
  const blocks: Block[] = [
    { lines: [{ prose: 'pooledBy', slots: { dirs: pool.runs.map((r) => r.dir).join(',') } }] },
    { table: { header: ['run', 'started', 'finished', 'code', 'trials', 'sessions', 'failed'], rows: runs } },
    { lines: [{ prose: 'pooledPairs', slots: {} }] },
  ];
  if (tables.length === 0) blocks.push({ lines: [{ prose: 'pooledNoControl', slots: {} }] });
  return markdownOf({ title: `${s.name}: ${pool.runs.length} runs pooled`, sections: [{ key: 'runs', heading: null, blocks }, ...tables] });
}
