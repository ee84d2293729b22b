/**
 * A lab run: every trial runs every neighbour experiment once per arm, arms
 * interleaved (their order rotates from trial to trial), the player history reset as
 * the scenario says (thesis section 2.5.6). Writes DIR/result.json after every session
 * (a killed run keeps what it measured) and, at the end, DIR/report.md rendered from
 * that file.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, release } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import type { Arm } from '@sammy/player/abr';
import type { SimArm } from '@sammy/sim/arms';
import { chromiumUnavailableReason, launchChromium } from '../browser.js';
import { startHeadlessPool, type HeadlessPool } from '../headless/pool.js';
import { runDesign } from './design-run.js';
import { deferCleanup } from './cleanup.js';
import { cpuBound, cpuMetrics } from '../analysis/cpu-samples.js';
import { startCpuMonitor } from './cpu-monitor.js';
import { ensureLabMedia, type LabMedia } from './media.js';
import { buildLabtools, gccUnavailableReason } from './native.js';
import { NEIGHBOUR_KINDS, neighbourKind, type NeighbourKind } from '../scenario/neighbour-kinds.js';
import { startNeighbour, type MeasurementWindow, type RunningNeighbour } from './neighbours.js';
import { netnsExec, rootUnavailableReason, sweepStaleNamespaces } from './netns.js';
import { CACHE_DIR, REPO_DIR } from '../paths.js';
import { codeVersion } from './code-version.js';
import { LabError } from '../lab-error.js';
import { run, sleep } from './processes.js';
import { startDelayLineQueueMonitor, startQueueMonitor } from './queue-monitor.js';
import { writeReportFromDir } from './write-report.js';
import { summaries, type LabResult, type TrialMetrics, type TrialRecord } from '../analysis/result.js';
import { baseExperiment, bdpBytes, experimentArms, linkRateMbps, queueBytes, traceStartS, type Experiment, type Scenario } from '../scenario/scenario.js';
import { startSession, type BrowserSessionResult, type RunningSession, type StorageState } from './session.js';
import { fixed } from '../analysis/stats.js';
import type { DelayLineStats, SessionResult } from '../analysis/records.js';
import { createTopology, destroyTopology, measureIdleRtt, setBottleneckQueue, setServerTrains, type IdleRtt, type Topology } from './topology.js';
import { longestOutage, opportunitySchedule, readTrace, resumeAfterOutage, scheduleText, type OpportunitySchedule } from '../scenario/trace.js';
import { calibrateTraceLink, restartTrace } from './trace-link.js';
import { compactTelemetry, videoMetrics } from '../analysis/video-metrics.js';
import { phaseWindows } from '../analysis/windows.js';
import { traceCapacity, traceSpanS } from '../analysis/delay-by-capacity.js';
import { chromiumTrustArgs, makeLabCertificate, type LabCertificate } from './lab-tls.js';
import { NEIGHBOUR_VIDEO_PORT, PLAYER_DIST, SERVER_LAUNCHERS, startVideoServer, stopVideoServer, VIDEO_PORT, type VideoServer } from './video-server.js';

export interface RunOptions {
  scenario: Scenario;
  outDir: string;
  log: (line: string) => void;
  /** Build the link and, on a trace link, measure its fidelity; run no session. */
  calibrateOnly?: boolean;
}

/** Why the lab cannot run here (no root, Chromium or gcc), or null when it can. */
export function labUnavailableReason(): string | null {
  return rootUnavailableReason() ?? chromiumUnavailableReason() ?? gccUnavailableReason();
}

/** Rotates the arm order by trial so no arm always runs first (interleaving). */
export function armOrder(arms: Arm[], trial: number): Arm[] {
  const k = (trial - 1) % arms.length;
  return [...arms.slice(k), ...arms.slice(0, k)];
}

/** Why there is no player page to test, or null (it is built, or can be built). */
export function playerUnavailableReason(): string | null {
  if (existsSync(join(PLAYER_DIST, 'index.html'))) return null;
  const pkg = JSON.parse(readFileSync(join(REPO_DIR, 'player', 'package.json'), 'utf8')) as { scripts?: Record<string, string> };
  return pkg.scripts?.build ? null : `no player page: ${PLAYER_DIST} is missing and @sammy/player has no build script yet`;
}

async function ensurePlayerBuilt(log: (line: string) => void): Promise<void> {
  const pkg = JSON.parse(readFileSync(join(REPO_DIR, 'player', 'package.json'), 'utf8')) as { scripts?: Record<string, string> };
  if (pkg.scripts?.build && process.env.SAMMY_LAB_PLAYER_DIR === undefined) {
    log('building the player page (npm run build -w @sammy/player)');
    await run('npm', ['run', 'build', '-w', '@sammy/player'], { timeoutMs: 300_000 });
  }
  if (!existsSync(join(PLAYER_DIST, 'index.html'))) throw new LabError('LAB_NO_PLAYER', `no built player page at ${PLAYER_DIST} (npm run build -w @sammy/player)`);
}

interface RunContext {
  s: Scenario;
  topo: Topology;
  labtools: string;
  media: LabMedia;
  outDir: string;
  log: (line: string) => void;
  /** Per-arm history mode: each arm's browser storage after its last session. */
  armStorage: Map<Arm, StorageState>;
  /** A trace link's delivery opportunities; null on a constant link. */
  schedule: OpportunitySchedule | null;
  /** The headless player process (player.kind headless); null for the browser. */
  pool: HeadlessPool | null;
  /** Per-arm history mode, headless: the arms whose device history has been started (reset once). */
  armHistory: Set<Arm>;
  /** The run's certificate when the player reaches the server over TLS (`server.protocol`), else null. */
  tls: LabCertificate | null;
}

function playerConfig(s: Scenario): Record<string, unknown> {
  return { ...s.player.config, maxBufferS: s.player.maxBufferS };
}

let headlessSessions = 0;

/** A headless session in the run's player process; per-arm history lives on the device `arm-<arm>`, as the designs' sessions use it. */
async function startHeadless(ctx: RunContext, o: { baseUrl: string; arm: Arm; resetHistory: boolean; device?: string; onPlayRequest?: () => Promise<void> }): Promise<RunningSession> {
  await o.onPlayRequest?.();
  return ctx.pool!.startSession({
    id: `lab-${++headlessSessions}`, baseUrl: o.baseUrl, arm: o.arm as SimArm, device: o.device ?? `arm-${o.arm}`, resetHistory: o.resetHistory,
    config: playerConfig(ctx.s), startupTimeoutS: ctx.s.session.startupTimeoutS,
    // It stands in for a browser session here, which loads the page with an empty cache.
    loadPage: true,
  });
}

/** The bottleneck queue and the server namespace's trains of experiment `e`, before its session's server starts. */
async function applyExperiment(ctx: RunContext, e: Experiment): Promise<void> {
  if (!ctx.s.link.trace) await setBottleneckQueue(ctx.topo, queueBytes(ctx.s.link, e.queue));
  await setServerTrains(ctx.topo, e.server.trainPackets);
}

/** One session of `arm` in experiment `n`, playing `playS` after its first frame. */
async function runSession(ctx: RunContext, trial: number, n: Experiment, arm: Arm, order: number, playS: number, tag: string): Promise<TrialRecord> {
  const { s, topo } = ctx;
  const perArm = s.player.history === 'per-arm';
  const headless = ctx.pool !== null;
  const historyReset = !perArm || !(headless ? ctx.armHistory.has(arm) : ctx.armStorage.has(arm));
  const logDir = join(ctx.outDir, 'logs');
  mkdirSync(logDir, { recursive: true });
  const record: TrialRecord = {
    trial, neighbour: n.kind, experiment: n.name, arm, order, startedAt: new Date().toISOString(), originMs: Date.now(), historyReset, playbackStartS: null, traceStartS: null,
    window: null, metrics: videoMetrics(null, [], [], linkRateMbps(s.link)), session: null, neighbourSession: null,
    telemetry: [], neighbourRaw: null, queue: [], cpu: [], error: null,
  };
  const serverOpts = { kind: s.server.kind, protocol: s.server.protocol, tls: ctx.tls, mediaDir: ctx.media.dir, burstPackets: n.server.burstPackets, extraArgs: s.server.extraArgs, port: VIDEO_PORT };
  let server: VideoServer | null = null;
  let neighbourServer: VideoServer | null = null;
  let browser: Browser | null = null;
  let neighbourBrowser: Browser | null = null;
  let session: RunningSession | null = null;
  let neighbourSession: RunningSession | null = null;
  let running: RunningNeighbour | null = null;
  let originMs = Date.now();
  let traceStartMs: number | null = null;
  const cpu = startCpuMonitor(() => originMs);
  const queue = s.link.trace ? startDelayLineQueueMonitor(topo.delayLine!, () => originMs) : startQueueMonitor(topo.ns.router, topo.bottleneckDev, () => originMs);
  // A trace link starts its trace again at every play request, at the trial's point of it, so every arm of a trial meets the same network.
  const traceFromS = traceStartS(s, trial);
  if (s.link.trace) record.traceFromS = traceFromS;
  const onPlayRequest = s.link.trace ? async () => void (traceStartMs = await restartTrace(topo.traceLine!, traceFromS)) : undefined;
  const undefer = deferCleanup(async () => void (await Promise.all([browser?.close(), neighbourBrowser?.close()])));
  try {
    await applyExperiment(ctx, n);
    server = await startVideoServer(topo, { ...serverOpts, logFile: join(logDir, `${tag}.server.log`) });
    const second = neighbourKind(n.kind).playerSession?.(n) ?? null;
    if (second) neighbourServer = await startVideoServer(topo, { ...serverOpts, port: NEIGHBOUR_VIDEO_PORT, logFile: join(logDir, `${tag}.neighbour-server.log`) });
    if (headless) {
      session = await startHeadless(ctx, { baseUrl: server.url, arm, resetHistory: historyReset, onPlayRequest });
      ctx.armHistory.add(arm);
    } else {
      browser = await launchChromium({ netns: topo.ns.client, handleSignals: false, extraArgs: chromiumTrustArgs(ctx.tls) });
      // A neighbour video gets its own Chromium process, started now so that it is ready at its window: its page's
      // decoding and JavaScript then run apart from the measured page's (the CPU load is recorded per session).
      if (second) neighbourBrowser = await launchChromium({ netns: topo.ns.client, handleSignals: false, extraArgs: chromiumTrustArgs(ctx.tls) });
      session = await startSession(browser, {
        baseUrl: server.url, arm, playerConfig: playerConfig(s), startupTimeoutS: s.session.startupTimeoutS,
        resetHistory: historyReset, storageState: perArm ? ctx.armStorage.get(arm) : undefined, onPlayRequest,
      });
    }
    originMs = record.originMs = session.originMs;
    if (traceStartMs !== null) record.traceStartS = (traceStartMs - originMs) / 1000;
    const playbackStartMs = await session.playbackStart;
    record.playbackStartS = (playbackStartMs - originMs) / 1000;
    ctx.log(`  ${tag}: playing after ${record.playbackStartS.toFixed(2)} s; ${playS} s to go`);
    const endMs = playbackStartMs + playS * 1000;
    let window: MeasurementWindow | null = null;
    if (n.kind !== 'none') {
      const startS = n.startS;
      const endS = n.endS ?? playS;
      window = { startMs: playbackStartMs + startS * 1000, endMs: playbackStartMs + endS * 1000, startS, endS };
      record.window = { startS, endS };
      await sleep(window.startMs - Date.now());
      if (second && headless) {
        neighbourSession = await startHeadless(ctx, { baseUrl: neighbourServer!.url, arm: second.arm, resetHistory: true, device: `neighbour-${second.arm}` });
      } else if (second) {
        neighbourSession = await startSession(neighbourBrowser!, { baseUrl: neighbourServer!.url, arm: second.arm, playerConfig: playerConfig(s), startupTimeoutS: s.session.startupTimeoutS, resetHistory: true });
      } else {
        running = await startNeighbour(n, topo, ctx.labtools, (window.endMs - Date.now()) / 1000);
      }
    }
    await sleep(endMs - Date.now());
    if (running && window) {
      record.neighbourRaw = await running.finish(window);
      running = null;
    }
    if (neighbourSession) record.neighbourSession = recorded(await neighbourSession.finish());
    const finished = await session.finish();
    session = null;
    record.session = recorded(finished);
    if (perArm && finished.storageState) ctx.armStorage.set(arm, finished.storageState);
  } catch (err) {
    record.error = (err as Error).message.split('\n')[0] ?? String(err);
  } finally {
    if (running) await running.finish({ startMs: originMs, endMs: Date.now(), startS: 0, endS: 0 }).catch(() => null);
    if (session) record.session = await session.finish().then(recorded, () => null);
    await browser?.close().catch(() => {});
    await neighbourBrowser?.close().catch(() => {});
    undefer();
    record.queue = queue.stop();
    record.cpu = cpu.stop();
    if (server) record.telemetry = compactTelemetry(await stopVideoServer(server).catch(() => []), originMs);
    if (neighbourServer) await stopVideoServer(neighbourServer).catch(() => []);
  }
  const metrics: TrialMetrics = videoMetrics(record.session?.qoe ?? null, record.telemetry, record.queue, linkRateMbps(s.link));
  const windowMs = record.window ? (record.window.endS - record.window.startS) * 1000 : null;
  Object.assign(metrics, neighbourKind(n.kind).measure({ raw: record.neighbourRaw, windowMs, session: record.neighbourSession }));
  Object.assign(metrics, outageMetrics(ctx.schedule, record, playS), cpuMetrics(record.cpu ?? []));
  record.metrics = metrics;
  const fraction = s.session.steadyFromBufferFraction;
  if (fraction !== null) {
    const topBitrateKbps = Math.max(...ctx.media.sidecar.representations.map((r) => r.bitrateKbps));
    record.windows = phaseWindows(record, { maxBufferS: s.player.maxBufferS, fraction, playS, topBitrateKbps, rateMbps: linkRateMbps(s.link) });
  }
  return record;
}

/** A session as result.json keeps it: the browser storage is carried in memory only. */
function recorded({ storageState: _, ...session }: BrowserSessionResult): SessionResult {
  return session;
}

function describe(r: TrialRecord): string {
  if (r.error) return `FAILED: ${r.error}`;
  const m = r.metrics;
  const parts = [
    `chunk ${fixed(m.chunkThroughputKbps === null ? null : m.chunkThroughputKbps / 1000)} Mbps`, `rtt ${fixed(m.videoRttMs)} ms`, `play ${fixed(m.playDelayS, 2)} s`,
    `rebuf ${m.rebufferCount ?? '-'}`, `bitrate ${fixed(m.avgBitrateKbps, 0)} kbps`,
  ];
  if (m.mediaErrors) parts.push(`${m.mediaErrors} media error(s)`);
  if (m.abandonedChunks) parts.push(`${m.abandonedChunks} chunk(s) refetched`);
  if (m.guardRaisedChunks) parts.push(`${m.guardRaisedChunks} chunk(s) raised by the server's guard`);
  if (r.windows !== undefined) {
    const steady = r.windows?.steady;
    parts.push(steady ? `steady from ${fixed(steady.fromS, 1)} s: chunk ${fixed(steady.metrics.chunkThroughputMultiple, 2)}x top${steady.metrics.udpOwdMs === undefined ? '' : `, udp owd ${fixed(steady.metrics.udpOwdMs, 2)} ms`}` : 'the buffer never reached the steady-state level');
  }
  parts.push(`cpu ${fixed(m.cpuBusyPct, 0)}% (${fixed(m.cpuBusyUnnicedPct, 0)}% un-niced)${cpuBound(m) ? ' CPU-BOUND' : ''}`);
  if (m.resumedAfterOutage !== undefined) parts.push(m.resumedAfterOutage ? `played on ${fixed(m.outageResumeS)} s after the outage` : 'NOT playing after the outage');
  for (const kind of Object.keys(NEIGHBOUR_KINDS) as NeighbourKind[]) {
    const { metrics, describe: words } = neighbourKind(kind);
    if (words && metrics[0] && m[metrics[0].name] !== undefined) parts.push(words(m));
  }
  return parts.join(', ');
}

/** On a trace link, whether and how soon playback went on after the longest outage that ended inside the session. */
function outageMetrics(schedule: OpportunitySchedule | null, r: TrialRecord, playS: number): Partial<TrialMetrics> {
  if (!schedule || r.traceStartS === null || r.traceStartS === undefined || r.playbackStartS === null || !r.session) return {};
  const fromS = r.traceFromS ?? 0;
  const longest = longestOutage(schedule, fromS, fromS + r.playbackStartS + playS - r.traceStartS);
  if (!longest) return {};
  const { resumed, resumeS } = resumeAfterOutage(r.session.buffer, longest.endS - fromS + r.traceStartS);
  return { resumedAfterOutage: resumed ? 1 : 0, outageResumeS: resumeS };
}

/** Writes the delay line's schedule once per content into the cache; returns its path. */
function writeSchedule(schedule: OpportunitySchedule, name: string): string {
  const text = scheduleText(schedule, name);
  const dir = join(CACHE_DIR, 'schedules');
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${createHash('sha256').update(text).digest('hex').slice(0, 16)}.txt`);
  if (!existsSync(path)) writeFileSync(path, text);
  return path;
}

/** The video server's command lines as result.json records them (DIR: the run's folder; PORT: the origin's, chosen at start). */
function videoServerConfig(s: Scenario, media: LabMedia | null): { args: string[]; originArgs?: string[] } {
  if (media === null) return { args: [] };
  const tls = s.server.protocol === 'h1' ? null : { certFile: 'DIR/tls/lab-server-cert.pem', keyFile: 'DIR/tls/lab-server-key.pem' };
  const o = { kind: s.server.kind, protocol: s.server.protocol, tls, mediaDir: media.dir, logFile: 'DIR/logs/<session>.server.log', burstPackets: s.server.burstPackets, extraArgs: s.server.extraArgs, port: VIDEO_PORT };
  return SERVER_LAUNCHERS[s.server.kind].args(o, 'PORT');
}

export async function runLab(o: RunOptions): Promise<LabResult> {
  const { scenario: s, outDir, log } = o;
  const reason = labUnavailableReason() ?? SERVER_LAUNCHERS[s.server.kind].unavailableReason();
  if (reason) throw new LabError('LAB_UNAVAILABLE', reason);
  mkdirSync(outDir, { recursive: true });
  const swept = await sweepStaleNamespaces();
  if (swept.length > 0) log(`removed stale lab namespaces of dead runs: ${swept.join(', ')}`);
  const labtools = await buildLabtools();
  // Built once here, not inside the first session (each edge or nginx then finds it built).
  if (!o.calibrateOnly) await SERVER_LAUNCHERS[s.server.kind].build();
  // A calibration plays no video: it needs neither the media nor the page.
  const media = o.calibrateOnly ? null : await ensureLabMedia(s.media.ladder, s.media.durationS, log);
  // The headless player needs no page (the server still serves the built one if it is there).
  if (!o.calibrateOnly && s.player.kind === 'browser') await ensurePlayerBuilt(log);
  const schedule = s.link.trace ? opportunitySchedule(readTrace(s.link.trace.path)) : null;
  const link = {
    rateMbps: s.link.rateMbps, trace: schedule ? { scheduleFile: writeSchedule(schedule, s.link.trace!.file) } : null, rttMs: s.link.rttMs,
    queueBytes: queueBytes(s.link), shapeUpstream: s.link.shapeUpstream, burstBytes: s.link.burstBytes, serverCongestionControl: s.server.congestionControl,
  };
  const topo = await createTopology(link, labtools);
  let delayLine: DelayLineStats | null = null;
  let destroyed = false;
  const destroy = async () => {
    if (destroyed) return;
    destroyed = true;
    delayLine = await destroyTopology(topo);
  };
  const undefer = deferCleanup(destroy);
  const idleRtt: IdleRtt | null = await measureIdleRtt(topo);
  const rateText = s.link.trace ? `trace ${s.link.trace.file} (mean ${s.link.trace.meanRateMbps.toFixed(2)} Mbit/s)` : `${s.link.rateMbps} Mbit/s`;
  log(`topology ${topo.ns.server} / ${topo.ns.router} / ${topo.ns.client}: ${rateText}, queue ${link.queueBytes} B, RTT ${s.link.rttMs} ms (idle ping ${idleRtt ? `${idleRtt.avgMs.toFixed(2)} ms avg, ${idleRtt.minMs.toFixed(2)} min` : 'unavailable'})`);
  const result: LabResult = {
    config: {
      scenario: s,
      link: {
        ...link, trace: s.link.trace, traceSchedule: link.trace && schedule ? { file: link.trace.scheduleFile, opportunities: schedule.offsetsUs.length, periodUs: schedule.periodUs, loopFromUs: schedule.loopFromUs } : null,
        bdpBytes: bdpBytes(s.link), measuredIdleRtt: idleRtt,
        bottleneck: s.link.trace ? 'labtools delay: a droptail queue of queueBytes served at the trace\'s delivery opportunities (1500 B each), downlink only; no tbf' : 'tbf',
        delayLine: s.link.rttMs > 0 || s.link.trace ? 'labtools delay (TUN per direction, no netem on this kernel)' : 'none',
      },
      server: { kind: s.server.kind, ...videoServerConfig(s, media), congestionControl: s.server.congestionControl },
      player: { requested: playerConfig(s), byArm: {} as Record<string, unknown> },
      media: { dir: media?.dir ?? null, ladder: s.media.ladder, durationS: s.media.durationS, rungsKbps: media?.sidecar.representations.map((r) => r.bitrateKbps) ?? [] },
      host: { kernel: release(), cpus: cpus().length, node: process.version },
      code: await codeVersion(REPO_DIR),
    },
    trials: [], summary: {}, summaryByNeighbour: {}, delayLine: null, traceFidelity: null, traceCapacity: schedule ? traceCapacity(schedule, traceSpanS(s)) : null, warmups: [], startedAt: new Date().toISOString(), finishedAt: null, complete: false,
  };
  const save = () => {
    Object.assign(result, summaries(result.trials, s.arms));
    writeFileSync(join(outDir, 'result.json'), JSON.stringify(result));
  };
  const pool = media && s.player.kind === 'headless' ? await startHeadlessPool((cmd, args) => netnsExec(topo.ns.client, cmd, args)) : null;
  const undeferPool = deferCleanup(async () => void (await pool?.close()));
  const ctx: RunContext | null = media && { s, topo, labtools, media, outDir, log, armStorage: new Map(), schedule, pool, armHistory: new Set(), tls: s.server.protocol === 'h1' ? null : makeLabCertificate(join(outDir, 'tls')) };
  const total = s.experiment ? 0 : s.trials * s.neighbours.reduce((a, n) => a + experimentArms(s, n).length, 0);
  try {
    if (schedule) {
      const seconds = s.link.calibrationS!;
      log(`trace fidelity: a saturating TCP Reno flow for ${seconds} s from the trace's start`);
      result.traceFidelity = await calibrateTraceLink({
        delayLine: topo.traceLine!, schedule, traceName: s.link.trace!.file, seconds,
        startFlow: (durationS) => startNeighbour({ kind: 'tcp', congestionControl: 'reno', startS: 0, endS: null }, topo, labtools, durationS),
      });
      const f = result.traceFidelity;
      log(`trace fidelity: per-second correlation ${fixed(f.correlation, 3)}, total ${fixed(f.totalRatio, 3)} x the trace (receiver payload ${fixed(f.goodputTotalRatio, 3)} x); ${f.withinTolerance ? 'within' : 'NOT within'} ${f.tolerance * 100}%`);
      save();
      await sleep(s.session.gapS * 1000);
    }
    if (!ctx) {
      result.complete = true; // a calibration only: nothing else was asked for
      return result;
    }
    if (s.player.history === 'per-arm') {
      // Thesis 2.5.6: every arm's history is reset before the arm runs; these sessions
      // then give each arm a history measured on this link, as a device would have.
      for (let w = 1; w <= s.player.warmupSessions; w++) {
        for (const arm of s.arms) {
          const r = await runSession(ctx, 0, baseExperiment(s), arm, 0, s.player.warmupPlayS, `warmup${w}-${arm}`);
          result.warmups.push({ arm, playDelayS: r.metrics.playDelayS, initialThroughputKbps: r.session?.qoe?.initialThroughputKbps ?? null, error: r.error });
          log(`warm-up ${w} ${arm}: ${r.error ?? `initial-phase throughput ${((r.session?.qoe?.initialThroughputKbps ?? NaN) / 1000).toFixed(1)} Mbps recorded into its history`}`);
          await sleep(s.session.gapS * 1000);
        }
      }
    }
    if (s.experiment) {
      await runDesign(
        {
          s, d: s.experiment, topo, labtools, media: ctx.media, pool: ctx.pool!, outDir, log,
          onRun: (runs, experiment) => {
            result.designRuns = runs;
            result.experiment = experiment;
            save();
          },
        },
        Math.max(...ctx.media.sidecar.representations.map((r) => r.bitrateKbps)),
      );
    }
    let done = 0;
    for (let trial = 1; trial <= (s.experiment ? 0 : s.trials); trial++) {
      for (const n of s.neighbours) {
        const arms = armOrder(experimentArms(s, n), trial);
        for (const [order, arm] of arms.entries()) {
          const t0 = Date.now();
          const tag = `t${String(trial).padStart(2, '0')}-${n.name}-${arm}`;
          const record = await runSession(ctx, trial, n, arm, order, s.session.playS, tag);
          result.trials.push(record);
          const byArm = (result.config.player as { byArm: Record<string, unknown> }).byArm;
          if (!byArm[arm] && record.session?.playerConfig) byArm[arm] = record.session.playerConfig;
          save();
          done += 1;
          log(`[${done}/${total}] trial ${trial}/${s.trials} ${n.name.padEnd(5)} ${arm.padEnd(8)} ${describe(record)} (${((Date.now() - t0) / 1000).toFixed(0)} s)`);
          await sleep(s.session.gapS * 1000);
        }
      }
    }
    result.complete = true;
  } finally {
    if (pool) {
      result.headlessPlayer = pool.usage();
      const u = result.headlessPlayer;
      log(`headless player process: ${u.sessions} sessions, ${u.cpuS === null ? '?' : u.cpuS.toFixed(1)} s of CPU in ${u.wallS.toFixed(0)} s (${u.cpuS === null ? '?' : ((100 * u.cpuS) / u.wallS).toFixed(1)}% of one core)`);
    }
    await pool?.close().catch(() => {});
    undeferPool();
    await destroy();
    undefer();
    result.delayLine = delayLine;
    result.finishedAt = new Date().toISOString();
    save();
    // From the file just written, as `npm run lab -- --report DIR` would: the two agree byte for byte.
    await writeReportFromDir(outDir);
  }
  return result;
}
