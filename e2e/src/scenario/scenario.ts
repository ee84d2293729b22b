/**
 * Lab scenarios: JSON files in e2e/scenarios/ (or any path), validated here with
 * errors that name the field, the value and what is accepted. Units live in names.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { ARM_REGISTRY, armsFor, isSammyConfigKey, type Arm } from '@sammy/player/abr';
import type { SimArm } from '@sammy/sim/arms';
import { FLOW_KINDS } from '../designs/fairness.js';
import { parseExperiment, type ExperimentDesign } from '../designs/index.js';
import { DEFAULT_SERVER_OPTIONS } from '@sammy/server/options';
import { NEIGHBOUR_KINDS, neighbourKind, type Neighbour, type NeighbourKind } from './neighbour-kinds.js';
import { SCENARIO_DIR } from '../paths.js';
import { LabError } from '../lab-error.js';
import { describeTrace, type LinkTrace } from './trace.js';
import { SERVER_KIND_NAMES, SERVER_KINDS, SERVER_PROTOCOLS, type ServerKind, type ServerKindDescription, type ServerProtocol } from './server-kinds.js';

export type { ServerProtocol } from './server-kinds.js';

/**
 * An experiment: a neighbour, optionally the subset of the scenario's arms that run
 * beside it, and the server and bottleneck settings of its sessions (the scenario's,
 * unless the experiment overrides them: e.g. the burst size on a shallow queue).
 */
export type Experiment = Neighbour & {
  /** Its name in the result and the report, unique in the scenario: the neighbour kind unless given. */
  name: string;
  arms: Arm[] | null;
  server: ServerSettings;
  queue: Queue;
};

/** The droptail queue at the bottleneck, in bandwidth-delay products (at the trace's mean rate on a trace link) or bytes. */
export type Queue = { bdp: number } | { bytes: number };

/** The scenario's server kind; results from before server.kind are the Node server's. */
export function serverKindOf(s: Pick<Scenario, 'server'>): ServerKindDescription {
  return SERVER_KINDS[s.server.kind] ?? SERVER_KINDS.node;
}

export interface ServerSettings {
  /** The server's `--burst-packets`. */
  burstPackets: number;
  /**
   * The kernel's trains in the server namespace: `net.ipv4.tcp_min_tso_segs` and the
   * server device's `gso_max_segs` set to N, so every paced train is at most (and
   * usually exactly) N packets; null leaves the kernel's defaults (2 and 65535).
   */
  trainPackets: number | null;
}

export interface Scenario {
  name: string;
  description: string;
  /** The report sets Sammy's changes beside the thesis's lab (section 2.6): only for a scenario that reproduces it. */
  thesisComparison: boolean;
  link: {
    /** A constant bottleneck (tbf); null on a trace link. */
    rateMbps: number | null;
    /** A trace-driven bottleneck (the delay line serves the trace's delivery opportunities); null on a constant link. */
    trace: LinkTrace | null;
    /** Trace links: how long the run's saturating-flow calibration of the trace's fidelity lasts. */
    calibrationS: number | null;
    /**
     * Trace links: where in the trace each trial's sessions start (`traceStartS`). `beginning`: every
     * session at the trace's time 0. `spread`: trial k of K at (k - 1) / K of one pass, so the
     * trials sample the whole trace, every arm and experiment of a trial at the same point. Null on a
     * constant link.
     */
    traceStart: TraceStart | null;
    rttMs: number;
    /** The default of every experiment's queue. */
    queue: Queue;
    shapeUpstream: boolean;
    burstBytes: number;
  };
  media: {
    /** An encoder ladder preset (`lab`, `hd`). */
    ladder: string;
    /** Length of the synthetic video: at least the buffer target plus the session. */
    durationS: number;
  };
  session: {
    /** How long each session plays, from its first frame (playback start). */
    playS: number;
    /** A session that shows no frame within this time fails. */
    startupTimeoutS: number;
    /** Seconds of quiet between sessions, so the queue and the delay line drain. */
    gapS: number;
    /**
     * Steady-state scenarios: every session is also measured in two windows, the
     * startup fill (until its buffer first holds this fraction of the buffer target)
     * and the steady state (from then on); null: the whole session only.
     */
    steadyFromBufferFraction: number | null;
  };
  player: {
    /**
     * `browser`: the player page in headless Chromium (one process per session).
     * `headless`: the Node headless player (`src/headless/`): the simulator's model of
     * each arm over real HTTP, many sessions in one process.
     */
    kind: PlayerKind;
    /** The buffer target of every arm: it decides when the video's bytes cross the link, so what neighbours see. */
    maxBufferS: number;
    /** Further player-config overrides, passed in the page's `&config=`. */
    config: Record<string, unknown>;
    /**
     * `per-arm`: each arm's history is reset once, before its first session, then
     * carries over between that arm's sessions (as on a device), seeded by
     * `warmupSessions` unmeasured sessions. `per-session`: reset before every session.
     */
    history: 'per-arm' | 'per-session';
    warmupSessions: number;
    /** Playback per warm-up session (the history is written when the initial phase ends). */
    warmupPlayS: number;
  };
  /** `burstPackets` and `trainPackets` are every experiment's defaults. */
  server: ServerSettings & {
    /** What serves the video in the server namespace (server-kinds.ts). */
    kind: ServerKind;
    /** How the player reaches it (server-kinds.ts `ServerProtocol`). */
    protocol: ServerProtocol;
    /** Congestion control of the server namespace: `reno` or `bbr` (a namespace may only default to these here). */
    congestionControl: string;
    extraArgs: string[];
  };
  /** Each neighbour is its own experiment; every arm (or the experiment's own `arms`) runs beside each. */
  neighbours: Experiment[];
  arms: Arm[];
  trials: number;
  /** An experiment design over many sessions at once (`src/designs/`); null runs the neighbour experiments. */
  experiment: ExperimentDesign | null;
}

export type PlayerKind = 'browser' | 'headless';
export const PLAYER_KINDS: readonly PlayerKind[] = ['browser', 'headless'];

const KINDS = Object.keys(NEIGHBOUR_KINDS) as NeighbourKind[];
const NAMESPACE_CCS = ['reno', 'bbr'];

/** A congestion control the server namespace may default to; `path` names where it came from. */
function namespaceCc(path: string, cc: string): string {
  if (!NAMESPACE_CCS.includes(cc)) bad(path, cc, `${NAMESPACE_CCS.join(', ')} (a network namespace may only default to the allowed ones)`);
  return cc;
}

function bad(path: string, value: unknown, accepted: string): never {
  throw new LabError('LAB_BAD_SCENARIO', `scenario field ${path} = ${JSON.stringify(value)} is invalid: expected ${accepted}`);
}

type Obj = Record<string, unknown>;

function obj(path: string, value: unknown, allowed: string[]): Obj {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) bad(path, value, 'an object');
  for (const key of Object.keys(value)) if (!allowed.includes(key)) bad(`${path}.${key}`, (value as Obj)[key], `no such field (allowed: ${allowed.join(', ')})`);
  return value as Obj;
}

function num(o: Obj, path: string, key: string, min: number, max: number, fallback?: number): number {
  const v = o[key] ?? fallback;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max) bad(`${path}.${key}`, o[key], `a number from ${min} to ${max}`);
  return v;
}

function int(o: Obj, path: string, key: string, min: number, max: number, fallback?: number): number {
  const v = num(o, path, key, min, max, fallback);
  if (!Number.isInteger(v)) bad(`${path}.${key}`, v, `an integer from ${min} to ${max}`);
  return v;
}

function str(o: Obj, path: string, key: string, fallback?: string): string {
  const v = o[key] ?? fallback;
  if (typeof v !== 'string' || v.length === 0) bad(`${path}.${key}`, o[key], 'a non-empty string');
  return v;
}

function bool(o: Obj, path: string, key: string, fallback: boolean): boolean {
  const v = o[key] ?? fallback;
  if (typeof v !== 'boolean') bad(`${path}.${key}`, v, 'true or false');
  return v;
}

/** The arms the registry says run headless on dash.js: the lab drives the player page (its default player) in headless Chromium. */
const LAB_ARMS: readonly Arm[] = armsFor('dashjs', 'headless');

function arm(path: string, v: unknown): Arm {
  if (!LAB_ARMS.includes(v as Arm)) bad(path, v, LAB_ARMS.join(', '));
  return v as Arm;
}

/** The arms the headless player runs: those the simulator models (`ARM_REGISTRY[arm].sim`). */
export const HEADLESS_ARMS: readonly Arm[] = LAB_ARMS.filter((a) => ARM_REGISTRY[a].sim !== null);

function headlessArm(path: string, v: unknown): SimArm {
  if (!HEADLESS_ARMS.includes(v as Arm)) bad(path, v, `an arm the headless player runs (${HEADLESS_ARMS.join(', ')}): it drives the simulator's model of each arm`);
  return v as SimArm;
}

function window(o: Obj, path: string, playS: number): { startS: number; endS: number | null } {
  const startS = num(o, path, 'startS', 0, playS, 0);
  const endS = o.endS === undefined || o.endS === null ? null : num(o, path, 'endS', startS, playS);
  if (endS !== null && endS <= startS) bad(`${path}.endS`, endS, `more than startS (${startS})`);
  return { startS, endS };
}

/** Every field a neighbour of some kind may have, in the registry's order. */
const NEIGHBOUR_FIELDS = [...new Set(KINDS.flatMap((k) => NEIGHBOUR_KINDS[k].fields))];

/** The most packets the kernel puts in one TSO/GSO packet here (64 KB at MSS 1448). */
const MAX_TRAIN_PACKETS = 44;

function serverSettings(o: Obj, path: string, defaults: ServerSettings): ServerSettings {
  const t = o.trainPackets === undefined ? defaults.trainPackets : o.trainPackets;
  return {
    burstPackets: int(o, path, 'burstPackets', 1, 65535, defaults.burstPackets),
    trainPackets: t === null ? null : int({ trainPackets: t }, path, 'trainPackets', 1, MAX_TRAIN_PACKETS),
  };
}

function queueOf(value: unknown, path: string): Queue {
  const q = obj(path, value, ['bdp', 'bytes']);
  if (Object.keys(q).length !== 1) bad(path, q, '{ "bdp": N } or { "bytes": N }');
  return 'bdp' in q ? { bdp: num(q, path, 'bdp', 0.01, 1000) } : { bytes: int(q, path, 'bytes', 1500, 1e9) };
}

interface ExperimentDefaults {
  playS: number;
  server: ServerSettings;
  queue: Queue;
  traceLink: boolean;
}

function experiment(value: unknown, path: string, d: ExperimentDefaults): Experiment {
  const o = obj(path, value, ['kind', 'name', 'arms', 'server', 'queue', ...NEIGHBOUR_FIELDS, 'startS', 'endS']);
  const { arms, name, server, queue, ...rest } = o;
  let subset: Arm[] | null = null;
  if (arms !== undefined) {
    if (!Array.isArray(arms) || arms.length === 0) bad(`${path}.arms`, arms, 'a non-empty array of arms');
    subset = arms.map((a, i) => arm(`${path}.arms[${i}]`, a));
  }
  if (queue !== undefined && d.traceLink) bad(`${path}.queue`, queue, "no value on a trace link (its queue is the delay line's, set once: link.queue)");
  const n = neighbour(rest, path, d.playS);
  return {
    ...n,
    name: name === undefined ? n.kind : str(o, path, 'name'),
    arms: subset,
    server: serverSettings(obj(`${path}.server`, server ?? {}, ['burstPackets', 'trainPackets']), `${path}.server`, d.server),
    queue: queue === undefined ? d.queue : queueOf(queue, `${path}.queue`),
  };
}

function neighbour(value: unknown, path: string, playS: number): Neighbour {
  const kind = (value as Obj | null)?.kind;
  if (!KINDS.includes(kind as NeighbourKind)) bad(`${path}.kind`, kind, KINDS.join(', '));
  const spec = neighbourKind(kind as NeighbourKind);
  const o = obj(path, value, ['kind', ...spec.fields, ...(spec.windowed ? ['startS', 'endS'] : [])]);
  const fields = spec.parse(o, path, { num, int, str, arm });
  return { kind, ...fields, ...(spec.windowed ? window(o, path, playS) : {}) } as Neighbour;
}

/** A server with no burst knob (its trains are the kernel's; trainPackets sets them in the namespace): a burstPackets is a mistake. */
function refuseBurstPackets(kind: ServerKind, trainsOf: string, server: Obj, neighbours: unknown): void {
  const accepted = `no value with server.kind ${kind} (${trainsOf}'s trains are the kernel's: use trainPackets)`;
  if (server.burstPackets !== undefined) bad('server.burstPackets', server.burstPackets, accepted);
  if (!Array.isArray(neighbours)) return;
  neighbours.forEach((n, i) => {
    const value = ((n as Obj | null)?.server as Obj | undefined)?.burstPackets;
    if (value !== undefined) bad(`neighbours[${i}].server.burstPackets`, value, accepted);
  });
}

/** `link.trace`: the file, relative to the scenario's folder, read with the simulator's parser. */
function linkTrace(link: Obj, scenarioDir: string): LinkTrace {
  const file = str(link, 'link', 'trace');
  const path = resolve(scenarioDir, file);
  try {
    return describeTrace(file, path);
  } catch (err) {
    return bad('link.trace', file, `a mahimahi trace or a JSON steps file, relative to the scenario file (${path}: ${(err as Error).message})`);
  }
}

export const TRACE_STARTS = ['beginning', 'spread'] as const;
export type TraceStart = (typeof TRACE_STARTS)[number];

/** Validates a parsed scenario and fills defaults; `scenarioDir` is where a trace's relative path starts. */
export function parseScenario(json: unknown, scenarioDir: string = SCENARIO_DIR): Scenario {
  const o = obj('scenario', json, ['name', 'description', 'thesisComparison', 'link', 'media', 'session', 'player', 'server', 'neighbours', 'arms', 'trials', 'experiment']);
  const link = obj('link', o.link, ['rateMbps', 'trace', 'calibrationS', 'traceStart', 'rttMs', 'queue', 'shapeUpstream', 'burstBytes']);
  if ((link.rateMbps === undefined) === (link.trace === undefined)) {
    bad('link', link, 'exactly one of rateMbps (a constant rate, tbf) and trace (a mahimahi or JSON steps file)');
  }
  const trace = link.trace === undefined ? null : linkTrace(link, scenarioDir);
  if (trace === null && link.calibrationS !== undefined) bad('link.calibrationS', link.calibrationS, 'no value: only a trace link (link.trace) is calibrated');
  if (trace === null && link.traceStart !== undefined) bad('link.traceStart', link.traceStart, 'no value: only a trace link (link.trace) has a place to start');
  const traceStart = trace === null ? null : (link.traceStart ?? 'beginning');
  if (traceStart !== null && !TRACE_STARTS.includes(traceStart as TraceStart)) {
    bad('link.traceStart', traceStart, `${TRACE_STARTS.join(', ')} (beginning: every session at the trace's start; spread: trial k of K at (k - 1) / K of the trace)`);
  }
  if (trace !== null && link.shapeUpstream === true) bad('link.shapeUpstream', true, 'false on a trace link (the trace shapes server -> client only)');
  const queue = queueOf(link.queue ?? { bdp: 4 }, 'link.queue');
  const media = obj('media', o.media ?? {}, ['ladder', 'durationS']);
  const session = obj('session', o.session ?? {}, ['playS', 'startupTimeoutS', 'gapS', 'steadyFromBufferFraction']);
  const player = obj('player', o.player ?? {}, ['kind', 'maxBufferS', 'config', 'history', 'warmupSessions', 'warmupPlayS']);
  const playerKind = (player.kind ?? 'browser') as PlayerKind;
  if (!PLAYER_KINDS.includes(playerKind)) bad('player.kind', player.kind, `${PLAYER_KINDS.join(', ')} (browser: the page in Chromium; headless: the Node player, many sessions at once)`);
  const history = player.history ?? 'per-arm';
  if (history !== 'per-arm' && history !== 'per-session') bad('player.history', history, 'per-arm, per-session');
  const server = obj('server', o.server ?? {}, ['kind', 'protocol', 'burstPackets', 'trainPackets', 'congestionControl', 'extraArgs']);
  const kind = (server.kind ?? 'node') as ServerKind;
  if (!SERVER_KIND_NAMES.includes(kind)) bad('server.kind', kind, SERVER_KIND_NAMES.join(', '));
  const trainsOf = SERVER_KINDS[kind].kernelTrainsOf;
  const protocol = (server.protocol ?? 'h1') as ServerProtocol;
  if (!SERVER_PROTOCOLS.includes(protocol)) bad('server.protocol', server.protocol, SERVER_PROTOCOLS.join(', '));
  const kindProtocols: readonly ServerProtocol[] = SERVER_KINDS[kind].protocols;
  if (!kindProtocols.includes(protocol)) bad('server.protocol', protocol, `${kindProtocols.join(', ')} with server.kind ${kind}`);
  if (protocol !== 'h1' && playerKind === 'headless') bad('server.protocol', protocol, 'h1 with player.kind headless (the headless player speaks plain HTTP/1.1)');
  if (trainsOf !== null) refuseBurstPackets(kind, trainsOf, server, o.neighbours);
  const serverDefaults = serverSettings(server, 'server', { burstPackets: DEFAULT_SERVER_OPTIONS.burstPackets, trainPackets: null });
  const playS = num(session, 'session', 'playS', 1, 3600, 30);
  const maxBufferS = num(player, 'player', 'maxBufferS', 1, 3600, 240);
  const durationS = num(media, 'media', 'durationS', 10, 3600);
  if (durationS < playS + 10) bad('media.durationS', durationS, `at least session.playS + 10 (${playS + 10}) so the video never ends mid-session`);
  const cc = namespaceCc('server.congestionControl', str(server, 'server', 'congestionControl', 'reno'));
  const extraArgs = server.extraArgs ?? [];
  if (!Array.isArray(extraArgs) || extraArgs.some((a) => typeof a !== 'string')) bad('server.extraArgs', extraArgs, 'an array of strings');
  const config = player.config ?? {};
  obj('player.config', config, Object.keys(config as Obj));
  if (playerKind === 'headless') {
    for (const key of Object.keys(config as Obj)) if (!isSammyConfigKey(key)) bad(`player.config.${key}`, (config as Obj)[key], "a Sammy core parameter: the headless player runs the simulator's arm models, which read only those");
  }
  const design = o.experiment === undefined ? null : parseExperiment(o.experiment, 'experiment', { num, int, arm: headlessArm, bad }, { playS });
  if (design && trace !== null) bad('experiment', o.experiment, 'no experiment design on a trace link (link.trace): its trace restarts at each play request, for one session at a time; use link.rateMbps');
  if (design && playerKind !== 'headless') bad('player.kind', playerKind, 'headless with an experiment design (its sessions share the link at once; only the headless player runs many at a time)');
  if (design && o.neighbours === undefined) o.neighbours = [{ kind: 'none' }];
  if (!Array.isArray(o.neighbours) || o.neighbours.length === 0) bad('neighbours', o.neighbours, 'a non-empty array');
  const defaults = { playS, server: serverDefaults, queue, traceLink: trace !== null };
  const neighbours = o.neighbours.map((n, i) => experiment(n, `neighbours[${i}]`, defaults));
  const names = neighbours.map((n) => n.name);
  if (new Set(names).size !== names.length) bad('neighbours', names, 'each experiment name at most once (the name is the kind unless given)');
  if (design && o.arms === undefined) o.arms = [...new Set(design.design === 'fairness' ? design.flows.flatMap((f) => { const k = FLOW_KINDS[f]!; return 'video' in k ? [k.video] : []; }) : [design.control, design.treatment])];
  if (!Array.isArray(o.arms) || o.arms.length === 0) bad('arms', o.arms, `a non-empty array of ${LAB_ARMS.join(', ')}`);
  const arms = o.arms.map((a, i) => (playerKind === 'headless' ? headlessArm : arm)(`arms[${i}]`, a) as Arm);
  if (new Set(arms).size !== arms.length) bad('arms', arms, 'each arm at most once');
  neighbours.forEach((n, i) => n.arms?.forEach((a, j) => arms.includes(a) || bad(`neighbours[${i}].arms[${j}]`, a, `one of the scenario's arms (${arms.join(', ')})`)));
  return {
    name: str(o, 'scenario', 'name'),
    description: typeof o.description === 'string' ? o.description : '',
    thesisComparison: bool(o, 'scenario', 'thesisComparison', false),
    link: {
      rateMbps: trace === null ? num(link, 'link', 'rateMbps', 0.1, 10_000) : null,
      trace,
      calibrationS: trace === null ? null : num(link, 'link', 'calibrationS', 5, 3600, 30),
      traceStart: traceStart as TraceStart | null,
      rttMs: num(link, 'link', 'rttMs', 0, 1000),
      queue,
      shapeUpstream: bool(link, 'link', 'shapeUpstream', false),
      burstBytes: int(link, 'link', 'burstBytes', 1600, 1e7, 4096),
    },
    media: { ladder: str(media, 'media', 'ladder', 'lab'), durationS },
    session: {
      playS,
      startupTimeoutS: num(session, 'session', 'startupTimeoutS', 1, 600, 30),
      gapS: num(session, 'session', 'gapS', 0, 600, 2),
      steadyFromBufferFraction: session.steadyFromBufferFraction === undefined || session.steadyFromBufferFraction === null ? null : num(session, 'session', 'steadyFromBufferFraction', 0.1, 1),
    },
    player: {
      kind: playerKind,
      maxBufferS,
      config: config as Obj,
      history,
      warmupSessions: history === 'per-arm' ? int(player, 'player', 'warmupSessions', 0, 10, 1) : 0,
      warmupPlayS: num(player, 'player', 'warmupPlayS', 1, 600, 5),
    },
    server: { ...serverDefaults, kind, protocol, congestionControl: cc, extraArgs: extraArgs as string[] },
    neighbours,
    arms,
    trials: int(o, 'scenario', 'trials', 1, 1000, 1),
    experiment: design,
  };
}

/** The arms that run beside an experiment's neighbour, in the scenario's order. */
export function experimentArms(s: Scenario, e: Experiment): Arm[] {
  return e.arms === null ? s.arms : s.arms.filter((a) => e.arms!.includes(a));
}

/** The link's rate: its constant rate, or a trace's mean rate. */
export function linkRateMbps(link: Scenario['link']): number {
  return link.rateMbps ?? link.trace!.meanRateMbps;
}

/**
 * The trace time (s) at which the sessions of trial `trial` (1-based, of `s.trials`) start
 * their trace; 0 on a constant link, with `traceStart: beginning`, and for the warm-ups (trial 0).
 */
export function traceStartS(s: Pick<Scenario, 'link' | 'trials'>, trial: number): number {
  if (s.link.trace === null || s.link.traceStart !== 'spread' || trial < 1) return 0;
  return Math.round(((trial - 1) / s.trials) * s.link.trace.lengthS * 1000) / 1000;
}

/** Every trial's trace start (`traceStartS`), trial 1 first. */
export function trialTraceStartsS(s: Pick<Scenario, 'link' | 'trials'>): number[] {
  return Array.from({ length: s.trials }, (_, k) => traceStartS(s, k + 1));
}

/** The bandwidth-delay product of the link (at a trace's mean rate), in bytes. */
export function bdpBytes(link: Scenario['link']): number {
  return (linkRateMbps(link) * 1e6 * (link.rttMs / 1000)) / 8;
}

/** The droptail queue limit in bytes (at least two full-size packets): the link's own, or an experiment's. */
export function queueBytes(link: Scenario['link'], queue: Queue = link.queue): number {
  const bytes = 'bytes' in queue ? queue.bytes : queue.bdp * bdpBytes(link);
  return Math.max(3000, Math.round(bytes));
}

/** The settings of sessions outside any experiment (the warm-ups): the scenario's own, no neighbour. */
export function baseExperiment(s: Scenario): Experiment {
  return { kind: 'none', name: 'none', arms: null, server: { burstPackets: s.server.burstPackets, trainPackets: s.server.trainPackets }, queue: s.link.queue };
}

/** A scenario by name (a file in e2e/scenarios/) or by path. */
export function loadScenario(nameOrPath: string): Scenario {
  const path = nameOrPath.endsWith('.json') ? nameOrPath : join(SCENARIO_DIR, `${nameOrPath}.json`);
  if (!existsSync(path)) throw new LabError('LAB_BAD_SCENARIO', `no scenario ${nameOrPath} (looked for ${path}); use a name from e2e/scenarios/ or a .json path`);
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new LabError('LAB_BAD_SCENARIO', `scenario ${path} is not valid JSON: ${(err as Error).message}`);
  }
  return parseScenario(json, dirname(path));
}

/**
 * The run's overrides from the command line (arms, trials, neighbour kinds, player kind,
 * the server namespace's congestion control, and on a trace link another trace, `trace`
 * as a path, and where the trials start in it).
 */
export function withOverrides(
  s: Scenario,
  o: { arms?: string[]; trials?: number; neighbours?: string[]; player?: string; trace?: string; traceStart?: string; serverCongestionControl?: string },
): Scenario {
  const next = { ...s };
  if (o.serverCongestionControl !== undefined) {
    const cc = namespaceCc('--server-cc', o.serverCongestionControl);
    if (s.server.congestionControl !== cc) {
      next.server = { ...s.server, congestionControl: cc };
      next.description = `${s.description} [The server's congestion control replaced from the command line: --server-cc ${cc}.]`.trim();
    }
  }
  if (o.trace !== undefined || o.traceStart !== undefined) {
    const option = o.trace !== undefined ? '--trace' : '--trace-start';
    if (s.link.trace === null) bad(option, o.trace ?? o.traceStart, `a scenario with a trace link (link.trace); ${s.name} has a constant link`);
    next.link = { ...s.link };
  }
  if (o.trace !== undefined) {
    try {
      next.link.trace = describeTrace(o.trace, resolve(o.trace));
    } catch (err) {
      bad('--trace', o.trace, `a mahimahi trace or a JSON steps file (${(err as Error).message})`);
    }
    next.description = `${s.description} [The link's trace replaced from the command line: --trace ${o.trace}.]`.trim();
  }
  if (o.traceStart !== undefined) {
    if (!TRACE_STARTS.includes(o.traceStart as TraceStart)) bad('--trace-start', o.traceStart, TRACE_STARTS.join(', '));
    next.link.traceStart = o.traceStart as TraceStart;
  }
  if (o.player !== undefined) {
    if (!PLAYER_KINDS.includes(o.player as PlayerKind)) bad('--player', o.player, PLAYER_KINDS.join(', '));
    if (s.experiment && o.player !== 'headless') bad('--player', o.player, 'headless for a scenario with an experiment design');
    next.player = { ...s.player, kind: o.player as PlayerKind };
    if (o.player === 'headless') {
      s.arms.forEach((a, i) => headlessArm(`arms[${i}]`, a));
      s.neighbours.forEach((n, i) => n.kind === 'video' && headlessArm(`neighbours[${i}].arm`, n.arm));
      for (const key of Object.keys(s.player.config)) if (!isSammyConfigKey(key)) bad(`player.config.${key}`, s.player.config[key], 'a Sammy core parameter, with --player headless');
    }
  }
  if (o.arms) next.arms = o.arms.map((a, i) => (next.player.kind === 'headless' ? headlessArm : arm)(`--arms[${i}]`, a) as Arm);
  if (o.trials !== undefined) {
    if (!Number.isInteger(o.trials) || o.trials < 1) bad('--trials', o.trials, 'a positive integer');
    next.trials = o.trials;
  }
  if (o.neighbours) {
    const known = s.neighbours.map((n) => n.kind);
    const names = s.neighbours.map((n) => n.name);
    for (const k of o.neighbours) if (!known.includes(k as NeighbourKind) && !names.includes(k)) bad('--neighbours', k, `one of this scenario's kinds or experiment names: ${[...new Set([...known, ...names])].join(', ')}`);
    next.neighbours = s.neighbours.filter((n) => o.neighbours!.includes(n.kind) || o.neighbours!.includes(n.name));
  }
  return next;
}
