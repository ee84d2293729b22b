/**
 * Reads a lab run's `result.json.gz` (e2e/results/RUN/) for the neighbour model check:
 * only the fields the check needs, typed here, checked as they are read. The lab's own
 * types live in e2e/src/analysis/result.ts; the simulator does not import the lab.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { isSammyConfigKey, type SammyConfig } from '../core.js';
import { SimError } from '../errors.js';

/** Where the lab's scenarios name their trace files from (e2e/scenarios). */
const SCENARIO_DIR = fileURLToPath(new URL('../../../e2e/scenarios', import.meta.url));

/** Sammy parameters the core no longer knows: the fade hold, removed on 2026-11-28 (docs/algorithm.md). */
export const REMOVED_SAMMY_KEYS: readonly string[] = ['fadeHoldS', 'fadeDownloadMultiplier', 'fadeHoldMinBufferS'];

/** The lab's phase windows of a steady-state scenario (e2e/src/lab/windows.ts): the startup fill, then the steady state. */
export const PHASES = ['fill', 'steady'] as const;
export type Phase = (typeof PHASES)[number];

/** A stretch of a session and the neighbour's mean one-way delay in it; times in s from the first media request. */
export interface LabWindow {
  fromS: number;
  toS: number;
  udpOwdMs: number;
}

/** One lab session beside the UDP neighbour: what the simulator needs to replay it and what the neighbour measured. */
export interface LabSession {
  trial: number;
  arm: 'control' | 'sammy';
  /** Trace time at the player's first media request (the simulated session's time 0). */
  traceAtFirstRequestS: number;
  /** The neighbour's measurement window, in s from the first media request. */
  windowFromS: number;
  windowToS: number;
  /** Mean one-way delay of the neighbour's packets that arrived (`udpOwdMs`). */
  udpOwdMs: number;
  /** The same in each phase window the run measured (steady-state scenarios; none otherwise). */
  phases: Partial<Record<Phase, LabWindow>>;
  /** Sammy's history before this session: earlier sessions' initial-phase throughputs, oldest first. */
  historyKbps: number[];
}

export interface LabRun {
  name: string;
  traceFile: string;
  rttMs: number;
  maxBufferS: number;
  mediaDurationS: number;
  neighbourKbps: number;
  /** The sammy arm's config as recorded, keeping the core's keys. */
  sammy: Partial<SammyConfig>;
  /** Recorded keys of the fade hold, dropped: the simulator runs today's core without it. */
  droppedKeys: string[];
  /** The rate the run's server raised Sammy's paced requests to (its spiral guard), null when it raised none. */
  guardFloorKbps: number | null;
  /** Paced sammy responses the guard raised, of all paced sammy responses. */
  guardRaised: { raised: number; paced: number };
  /** Control and sammy sessions of one trial, both with a neighbour measurement. */
  pairs: Array<{ control: LabSession; sammy: LabSession }>;
}

type Json = Record<string, unknown>;

function field<T>(o: unknown, key: string, check: (v: unknown) => v is T, where: string): T {
  const v = (o as Json | null)?.[key];
  if (!check(v)) throw new SimError('SIM_BAD_LAB_RESULT', `${where}: ${key} is ${JSON.stringify(v)?.slice(0, 80)}, not what the check needs`);
  return v;
}
const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const isString = (v: unknown): v is string => typeof v === 'string';
const isArray = (v: unknown): v is unknown[] => Array.isArray(v);

/** The trace file a run ran on, found as its scenario named it and checked against its recorded sha256. */
function traceFileOf(link: Json, where: string): string {
  const trace = field(link, 'trace', isObject, where);
  const named = field(trace, 'file', isString, `${where} trace`);
  const sha256 = field(trace, 'sha256', isString, `${where} trace`);
  const path = resolve(SCENARIO_DIR, named);
  if (!existsSync(path)) throw new SimError('SIM_BAD_LAB_RESULT', `${where}: its trace ${named} is not at ${path}`);
  const actual = createHash('sha256').update(readFileSync(path)).digest('hex');
  if (actual !== sha256) throw new SimError('SIM_BAD_LAB_RESULT', `${where}: ${path} has changed since the run (sha256 ${actual}, recorded ${sha256})`);
  return path;
}

/** The telemetry row's columns (e2e/src/analysis/video-metrics.ts `compactTelemetry`): rtp and applied rate. */
const ROW_RTP = 8;
const ROW_APPLIED = 9;

export function readLabRun(dir: string): LabRun {
  const file = join(dir, 'result.json.gz');
  let result: Json;
  try {
    result = JSON.parse(gunzipSync(readFileSync(file)).toString('utf8')) as Json;
  } catch (err) {
    throw new SimError('SIM_BAD_LAB_RESULT', `cannot read ${file} (${(err as Error).message}); give a lab run's folder, e2e/results/RUN`);
  }
  const name = basename(dir);
  const config = field(result, 'config', isObject, name);
  const scenario = field(config, 'scenario', isObject, name);
  const link = field(scenario, 'link', isObject, name);
  const udp = field(scenario, 'neighbours', isArray, name).find((n) => isObject(n) && n.kind === 'udp');
  if (!udp) throw new SimError('SIM_BAD_LAB_RESULT', `${name} ran no UDP neighbour`);
  const byArm = field(field(config, 'player', isObject, name), 'byArm', isObject, name);
  const recorded = field(byArm, 'sammy', isObject, `${name} player`);
  const sammy: Partial<SammyConfig> = {};
  for (const [key, value] of Object.entries(recorded)) if (isSammyConfigKey(key)) Object.assign(sammy, { [key]: value });
  const droppedKeys = Object.keys(recorded).filter((k) => REMOVED_SAMMY_KEYS.includes(k));

  const trials = field(result, 'trials', isArray, name) as Json[];
  const history: Record<string, number[]> = {};
  for (const w of field(result, 'warmups', isArray, name) as Json[]) if (isNumber(w.initialThroughputKbps)) (history[w.arm as string] ??= []).push(w.initialThroughputKbps);
  let raised = 0;
  let paced = 0;
  let guardFloorKbps: number | null = null;
  const sessions = new Map<number, Partial<Record<'control' | 'sammy', LabSession>>>();
  for (const t of trials) {
    const arm = t.arm;
    if (arm !== 'control' && arm !== 'sammy') continue;
    const qoe = (t.session as Json | null)?.qoe as Json | null | undefined;
    const before = [...(history[arm] ?? [])];
    if (t.historyReset === true) history[arm] = [];
    if (qoe && isNumber(qoe.initialThroughputKbps)) (history[arm] ??= []).push(qoe.initialThroughputKbps);
    if (arm === 'sammy') {
      for (const row of (t.telemetry as unknown[][] | undefined) ?? []) {
        const rtp = row[ROW_RTP];
        const applied = row[ROW_APPLIED];
        if (!isNumber(rtp)) continue;
        paced += 1;
        if (isNumber(applied) && applied > rtp) {
          raised += 1;
          guardFloorKbps = Math.min(guardFloorKbps ?? Infinity, applied);
        }
      }
    }
    const owd = (t.metrics as Json | undefined)?.udpOwdMs;
    const window = t.window as Json | null;
    if (t.error !== null || t.neighbour !== 'udp' || !isNumber(owd) || !window || !qoe) continue;
    const where = `${name} trial ${t.trial} ${arm}`;
    const chunks = field(qoe, 'chunks', isArray, where) as Json[];
    const playbackStartS = field(t, 'playbackStartS', isNumber, where);
    // The player's clock starts at its play(): playback start minus its play delay.
    const firstRequestS = playbackStartS - field(qoe, 'playDelayS', isNumber, where) + field(chunks[0], 'requestS', isNumber, where);
    const traceAtOriginS = (isNumber(t.traceFromS) ? t.traceFromS : 0) - field(t, 'traceStartS', isNumber, where);
    const trial = field(t, 'trial', isNumber, where);
    const phases: LabSession['phases'] = {};
    for (const phase of PHASES) {
      const w = ((t.windows as Json | null | undefined)?.[phase] ?? null) as Json | null;
      const owdMs = (w?.metrics as Json | undefined)?.udpOwdMs;
      if (w && isNumber(w.fromS) && isNumber(w.toS) && isNumber(owdMs) && w.toS > w.fromS) {
        phases[phase] = { fromS: playbackStartS + w.fromS - firstRequestS, toS: playbackStartS + w.toS - firstRequestS, udpOwdMs: owdMs };
      }
    }
    const pair = sessions.get(trial) ?? {};
    pair[arm] = {
      trial,
      arm,
      traceAtFirstRequestS: traceAtOriginS + firstRequestS,
      windowFromS: playbackStartS + field(window, 'startS', isNumber, where) - firstRequestS,
      windowToS: playbackStartS + field(window, 'endS', isNumber, where) - firstRequestS,
      udpOwdMs: owd,
      phases,
      historyKbps: arm === 'sammy' && t.historyReset !== true ? before : [],
    };
    sessions.set(trial, pair);
  }
  const pairs = [...sessions.values()].filter((p): p is { control: LabSession; sammy: LabSession } => !!p.control && !!p.sammy).sort((a, b) => a.control.trial - b.control.trial);
  return {
    name,
    traceFile: traceFileOf(link, name),
    rttMs: field(link, 'rttMs', isNumber, name),
    maxBufferS: field(field(scenario, 'player', isObject, name), 'maxBufferS', isNumber, name),
    mediaDurationS: field(field(config, 'media', isObject, name), 'durationS', isNumber, name),
    neighbourKbps: field(udp, 'rateKbps', isNumber, `${name} neighbour`),
    sammy,
    droppedKeys,
    guardFloorKbps,
    guardRaised: { raised, paced },
    pairs,
  };
}
