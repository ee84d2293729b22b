/**
 * Runs an experiment design: each planned run puts its sessions (headless players, one
 * process) and flows (the neighbour registry's processes) on the link together, with
 * one video server whose per-response telemetry is split between the sessions by the
 * client port of each response (every session records its connections' local ports).
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ResponseTelemetry } from '@sammy/server/telemetry';
import type { HeadlessPool, HeadlessSessionResult } from '../headless/pool.js';
import { cpuMetrics } from '../analysis/cpu-samples.js';
import { startCpuMonitor } from './cpu-monitor.js';
import type { LabMedia } from './media.js';
import { startNeighbour, type RunningNeighbour } from './neighbours.js';
import { run as runCommand, sleep } from './processes.js';
import type { QueueSample } from '../analysis/queue-samples.js';
import { startQueueMonitor } from './queue-monitor.js';
import { queueBytes, type Scenario } from '../scenario/scenario.js';
import { fixed } from '../analysis/stats.js';
import { setBottleneckQueue, type Topology } from './topology.js';
import { compactTelemetry, videoMetrics, type ResponseRow } from '../analysis/video-metrics.js';
import { startVideoServer, stopVideoServer, VIDEO_PORT } from './video-server.js';
import { flowThroughputMbps, initialBitrateKbps, sessionError } from '../designs/common.js';
import { FLOW_KINDS } from '../designs/fairness.js';
import { designSpec, summarizeExperiment } from '../designs/index.js';
import type { DesignRun, ExperimentDesign, ExperimentResult, FlowOutcome, PlannedRun, PlannedSession, SessionOutcome } from '../designs/types.js';

export interface DesignRunContext {
  s: Scenario;
  d: ExperimentDesign;
  topo: Topology;
  labtools: string;
  media: LabMedia;
  pool: HeadlessPool;
  outDir: string;
  log: (line: string) => void;
  /** After each run: the runs so far and the estimates (the runner saves result.json). */
  onRun: (runs: DesignRun[], experiment: ExperimentResult) => void;
}

/** Whether the kernel offers `cc` (loading its module if it can); the reason when not. */
export async function congestionControlMissing(cc: string): Promise<string | null> {
  const available = () => readFileSync('/proc/sys/net/ipv4/tcp_available_congestion_control', 'utf8').split(/\s+/);
  if (available().includes(cc)) return null;
  await runCommand('modprobe', [`tcp_${cc}`], { allowFail: true });
  return available().includes(cc) ? null : `the kernel has no TCP ${cc} (net.ipv4.tcp_available_congestion_control: ${available().join(' ').trim()}; modprobe tcp_${cc} did not add it)`;
}

/** A design's flow kinds the kernel cannot run, each with why; the runner leaves them out. */
export async function unavailableFlows(d: ExperimentDesign): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (d.design !== 'fairness') return out;
  for (const f of d.flows) {
    const needs = (FLOW_KINDS[f] as { needs?: string }).needs;
    const why = needs ? await congestionControlMissing(needs) : null;
    if (why) out.set(f, why);
  }
  return out;
}

/** Bytes of the responses in `rows` that crossed [fromS, toS] (each spread over its duration), as Mbit/s over the window. */
export function windowThroughputMbps(rows: readonly ResponseRow[], fromS: number, toS: number): number | null {
  if (!(toS > fromS)) return null;
  let bytes = 0;
  for (const [endS, , size, durationMs] of rows) {
    const startS = endS - durationMs / 1000;
    const spanS = Math.max(durationMs / 1000, 1e-6);
    const overlap = Math.min(endS, toS) - Math.max(startS, fromS);
    if (overlap > 0) bytes += (size * Math.min(overlap, spanS)) / spanS;
  }
  return (bytes * 8) / (toS - fromS) / 1e6;
}

async function playSession(ctx: DesignRunContext, baseUrl: string, runStartMs: number, p: PlannedSession): Promise<{ p: PlannedSession; result: HeadlessSessionResult | null; error: string | null }> {
  await sleep(runStartMs + p.startS * 1000 - Date.now());
  let session: Awaited<ReturnType<HeadlessPool['startSession']>> | null = null;
  let error: string | null = null;
  try {
    session = await ctx.pool.startSession({
      id: p.id, baseUrl, arm: p.arm, device: p.device, resetHistory: p.resetHistory,
      config: { ...ctx.s.player.config, maxBufferS: ctx.s.player.maxBufferS }, startupTimeoutS: ctx.s.session.startupTimeoutS,
      // A design's viewers are returning ones, whose player page is cached: only the video crosses the link.
      loadPage: false,
    });
    const startMs = await session.playbackStart;
    await sleep(startMs + p.playS * 1000 - Date.now());
  } catch (err) {
    error = (err as Error).message.split('\n')[0] ?? String(err);
  }
  const result = session ? await session.finish().catch((err: Error) => ((error ??= err.message), null)) : null;
  return { p, result, error };
}

/** The server's lines for one session: its connections' ports, from its play request to its end. */
function rowsOf(lines: readonly ResponseTelemetry[], r: HeadlessSessionResult, endMs: number): ResponseTelemetry[] {
  const ports = new Set(r.localPorts);
  return lines.filter((l) => l.remotePort !== null && ports.has(l.remotePort) && l.time >= r.originMs - 1000 && l.time <= endMs + 5000);
}

export async function executeRun(ctx: DesignRunContext, plan: PlannedRun): Promise<DesignRun> {
  const { s, topo } = ctx;
  const rateMbps = plan.setting?.rateMbps ?? s.link.rateMbps!;
  const linkNow = { ...s.link, rateMbps };
  await setBottleneckQueue(topo, queueBytes(linkNow, plan.setting?.queue ?? s.link.queue), rateMbps);
  const logDir = join(ctx.outDir, 'logs');
  mkdirSync(logDir, { recursive: true });
  const tag = `t${String(plan.trial).padStart(2, '0')}-${plan.label.replace(/[^\w.+-]+/g, '_')}`;
  const server = await startVideoServer(topo, { kind: s.server.kind, protocol: s.server.protocol, tls: null, mediaDir: ctx.media.dir, burstPackets: s.server.burstPackets, extraArgs: s.server.extraArgs, port: VIDEO_PORT, logFile: join(logDir, `${tag}.server.log`) });
  const runStartMs = Date.now() + 500;
  const queue = startQueueMonitor(topo.ns.router, topo.bottleneckDev, () => runStartMs);
  const cpu = startCpuMonitor(() => runStartMs);
  const measureFromS = ctx.d.design === 'fairness' ? ctx.d.measureFromS : 0;
  let error: string | null = null;
  const flowsDone = plan.flows.map(async (f, slot): Promise<FlowOutcome> => {
    await sleep(runStartMs + f.startS * 1000 - Date.now());
    let running: RunningNeighbour | null = null;
    try {
      running = await startNeighbour(f.neighbour, topo, ctx.labtools, f.durationS, slot);
      await sleep(runStartMs + (f.startS + f.durationS) * 1000 - Date.now());
      const windowMs = plan.lengthS * 1000;
      const raw = await running.finish({ startMs: runStartMs, endMs: runStartMs + windowMs, startS: 0, endS: plan.lengthS });
      return { id: f.id, kind: f.kind, raw, throughputMbps: flowThroughputMbps(raw, windowMs, measureFromS * 1000), error: null };
    } catch (err) {
      if (running) await running.finish({ startMs: runStartMs, endMs: Date.now(), startS: 0, endS: 0 }).catch(() => null);
      return { id: f.id, kind: f.kind, raw: null, throughputMbps: null, error: (err as Error).message.split('\n')[0] ?? String(err) };
    }
  });
  const played = await Promise.all(plan.sessions.map((p) => playSession(ctx, server.url, runStartMs, p)));
  const flows = await Promise.all(flowsDone);
  const samples: QueueSample[] = queue.stop();
  const cpuSamples = cpu.stop();
  let lines: ResponseTelemetry[] = [];
  try {
    lines = await stopVideoServer(server);
  } catch (err) {
    error = (err as Error).message;
  }
  const sessions: SessionOutcome[] = played.map(({ p, result, error: e }) => {
    const { resetHistory: _reset, ...planned } = p;
    void _reset;
    const originMs = result?.originMs ?? null;
    const endMs = result?.playbackStartMs !== null && result?.playbackStartMs !== undefined ? result.playbackStartMs + p.playS * 1000 : Date.now();
    const rows = result && originMs !== null ? compactTelemetry(rowsOf(lines, result, endMs), originMs) : [];
    const span = originMs === null ? [] : samples.filter((q) => q[0] >= originMs - runStartMs && q[0] <= endMs - runStartMs);
    const metrics = { ...videoMetrics(result?.qoe ?? null, rows, span, rateMbps), ...cpuMetrics(cpuSamples), initialBitrateKbps: initialBitrateKbps(result?.qoe ?? null, ctx.media.sidecar.segmentDurationS) } as SessionOutcome['metrics'];
    if (plan.purpose === 'fairness' && originMs !== null) {
      // The run's measured part, in the session's clock (its rows are s since its play request).
      const offS = (originMs - runStartMs) / 1000;
      metrics.throughputMbps = windowThroughputMbps(rows, measureFromS - offS, plan.lengthS - offS);
    }
    const failed = sessionError(e, result?.qoe ?? null);
    return {
      ...planned, originS: originMs === null ? null : (originMs - runStartMs) / 1000,
      playbackStartS: result?.playbackStartMs && originMs !== null ? (result.playbackStartMs - originMs) / 1000 : null,
      metrics, qoe: result?.qoe ?? null, telemetry: rows, error: failed,
    };
  });
  const { sessions: _p, flows: _f, ...rest } = plan;
  void _p;
  void _f;
  return { ...rest, startedAt: new Date(runStartMs).toISOString(), sessions, flows, queue: samples, cpu: cpuSamples, error };
}

function describeRun(r: DesignRun): string {
  const ok = r.sessions.filter((x) => x.error === null);
  const m = (f: (x: SessionOutcome) => number | null | undefined) => {
    const v = ok.map(f).filter((x): x is number => typeof x === 'number');
    return v.length ? v.reduce((a, b) => a + b, 0) / v.length : null;
  };
  const parts = [`${ok.length}/${r.sessions.length} sessions played`];
  if (ok.length) parts.push(`chunk ${fixed((m((x) => x.metrics.chunkThroughputKbps) ?? NaN) / 1000)} Mbps`, `rtt ${fixed(m((x) => x.metrics.videoRttMs))} ms`, `play ${fixed(m((x) => x.metrics.playDelayS), 2)} s`, `rebuf ${fixed(m((x) => x.metrics.rebufferS), 2)} s`);
  for (const f of r.flows) parts.push(`${f.kind} ${fixed(f.throughputMbps)} Mbps${f.error ? ` (${f.error})` : ''}`);
  if (r.purpose === 'fairness') for (const x of r.sessions) parts.push(`${x.arm} ${fixed(x.metrics.throughputMbps)} Mbps`);
  const failed = r.sessions.filter((x) => x.error !== null);
  if (failed.length) parts.push(`FAILED: ${failed.map((x) => `${x.id}: ${x.error}`).join('; ').slice(0, 300)}`);
  return parts.join(', ');
}

/** Every trial's runs, in order; `skipped` says what could not run and why. */
export async function runDesign(ctx: DesignRunContext, topBitrateKbps: number): Promise<void> {
  const { s, d, log } = ctx;
  const skipped: string[] = [];
  let design = d;
  const missing = await unavailableFlows(d);
  if (missing.size > 0 && d.design === 'fairness') {
    for (const [f, why] of missing) {
      const line = `fairness: flow ${f} skipped: ${why}`;
      skipped.push(line);
      log(line);
    }
    design = { ...d, flows: d.flows.filter((f) => !missing.has(f)) };
  }
  const spec = designSpec(design.design);
  const plans = [...Array(s.trials).keys()].flatMap((k) => spec.plan(design, { playS: s.session.playS, history: s.player.history }, k + 1));
  const runs: DesignRun[] = [];
  for (const [i, plan] of plans.entries()) {
    const t0 = Date.now();
    const r = await executeRun({ ...ctx, d: design }, plan);
    runs.push(r);
    ctx.onRun(runs, summarizeExperiment(design, runs, { topBitrateKbps }, skipped));
    log(`[${i + 1}/${plans.length}] trial ${plan.trial}/${s.trials} ${plan.label}: ${describeRun(r)} (${((Date.now() - t0) / 1000).toFixed(0)} s)`);
    await sleep(s.session.gapS * 1000);
  }
}

