/**
 * npm run sim -- --trace TRACE [--ladder SEGMENTS_JSON] [--arm sammy|control|fixed4x|spiral]
 *                [--duration S] [--json] [--max-buffer S] [--config JSON] [--history-kbps LIST]
 *                [--latency-ms MS] [--mahimahi-bin-ms MS] [--trace-offset-s S] [--link-efficiency F]
 */
import { basename } from 'node:path';
import { armFactory } from '../arms/index.js';
import { SIM_ARMS, type SimArm } from '../arms/types.js';
import { SimError } from '../errors.js';
import { loadSidecar } from '../ladder.js';
import { DEFAULT_SESSION_DURATION_S, simulateSession, type SimSessionQoE } from '../session.js';
import { theorem1 } from '../theorem1.js';
import { atLinkEfficiency, DEFAULT_LATENCY_MS, DEFAULT_MAHIMAHI_BIN_MS, loadTrace, meanBandwidthKbps, startTraceAt } from '../trace.js';
import { BUNDLED_LADDER, jsonObject, LINK_EFFICIENCY_HELP, numberList, numberOption, runMain, traceSpec, userPath, cliValues } from './common.js';

const USAGE = `usage: npm run sim -- --trace TRACE [--ladder SEGMENTS_JSON] [--arm ${SIM_ARMS.join('|')}] [--duration S] [--json]
         [--max-buffer S] [--config '{"beta":0.6}'] [--history-kbps 8000,9000] [--latency-ms ${DEFAULT_LATENCY_MS}] [--mahimahi-bin-ms ${DEFAULT_MAHIMAHI_BIN_MS}]
         [--trace-offset-s 0] [--link-efficiency 1]
  TRACE: constant:KBPS | a JSON steps file | a mahimahi file (sim/traces/ has examples)
  --ladder defaults to the bundled lab ladder (sim/fixtures/lab-segments.json)
  --link-efficiency: ${LINK_EFFICIENCY_HELP}`;

function fmt(value: number | null, digits = 0, unit = ''): string {
  return value === null ? 'n/a' : `${value.toFixed(digits)}${unit}`;
}

export function formatSession(qoe: SimSessionQoE, ladderName: string): string {
  const ladder = qoe.config.ladderKbps as number[];
  const topKbps = ladder[ladder.length - 1]!;
  const th = theorem1(qoe.chunks, qoe.config.segmentDurationS as number);
  const rtp = qoe.sim.playingRtpKbps;
  const multiple = (kbps: number | null): string => (kbps === null ? '' : ` (${(kbps / topKbps).toFixed(2)}x the top bitrate)`);
  return [
    `${qoe.arm} on ${qoe.sim.trace}, ladder ${ladderName} (${ladder.join('/')} kbps), ${qoe.sim.mediaS} s of media`,
    'QoE',
    `  play delay          ${fmt(qoe.playDelayS, 3, ' s')}`,
    `  rebuffers           ${qoe.rebufferCount} (${qoe.rebufferS.toFixed(2)} s)`,
    `  bitrate             ${fmt(qoe.avgBitrateKbps, 0, ' kbps')} time-average`,
    `  quality             SSIM ${fmt(qoe.avgQuality, 4)}`,
    `  switches            ${qoe.switchCount}`,
    'Smoothness',
    `  chunk throughput    ${fmt(qoe.chunkThroughputKbps, 0, ' kbps')} playing phase${multiple(qoe.chunkThroughputKbps)}`,
    `                      ${fmt(qoe.initialThroughputKbps, 0, ' kbps')} initial phase`,
    `  pace (rtp)          ${rtp ? `mean ${rtp.mean.toFixed(0)}, min ${rtp.min}, max ${rtp.max} kbps (playing phase)` : 'none sent'}`,
    `  idle                ${qoe.sim.idleS.toFixed(1)} s of ${qoe.sim.lastArrivalS.toFixed(1)} s`,
    `Theorem 1             B_end ${th.bEndS.toFixed(3)} s = B_0 + D_T - D_T rbar/xbar - idle + stopped = ${th.predictedEndS.toFixed(3)} s`,
  ].join('\n');
}

async function main(): Promise<number> {
  const values = cliValues(
    {
      trace: { type: 'string' },
      ladder: { type: 'string' },
      arm: { type: 'string', default: 'sammy' },
      duration: { type: 'string' },
      json: { type: 'boolean', default: false },
      'max-buffer': { type: 'string' },
      config: { type: 'string' },
      'history-kbps': { type: 'string' },
      'latency-ms': { type: 'string' },
      'mahimahi-bin-ms': { type: 'string' },
      'trace-offset-s': { type: 'string' },
      'link-efficiency': { type: 'string' },
    },
    USAGE,
  );
  if (values === null) return 0;
  if (!values.trace) throw new SimError('SIM_BAD_ARGS', `--trace is required\n${USAGE}`);
  if (!(SIM_ARMS as readonly string[]).includes(values.arm!)) {
    throw new SimError('SIM_BAD_ARGS', `--arm must be one of ${SIM_ARMS.join(', ')}, got ${JSON.stringify(values.arm)}`);
  }
  const arm = values.arm as SimArm;
  const latencyMs = numberOption(values['latency-ms'], '--latency-ms', (n) => n >= 0, 'a non-negative number of ms');
  const binMs = numberOption(values['mahimahi-bin-ms'], '--mahimahi-bin-ms', (n) => n > 0, 'a positive number of ms');
  const traceOffsetS = numberOption(values['trace-offset-s'], '--trace-offset-s', (n) => n >= 0, 'a non-negative number of seconds') ?? 0;
  const linkEfficiency = numberOption(values['link-efficiency'], '--link-efficiency', (n) => n > 0 && n <= 1, 'a number in (0, 1]') ?? 1;
  const trace = atLinkEfficiency(
    startTraceAt(
      loadTrace(traceSpec(values.trace), {
        ...(latencyMs === undefined ? {} : { defaultLatencyMs: latencyMs }),
        ...(binMs === undefined ? {} : { mahimahiBinMs: binMs }),
      }),
      traceOffsetS,
    ),
    linkEfficiency,
  );
  const ladderPath = values.ladder === undefined ? BUNDLED_LADDER : userPath(values.ladder);
  const sidecar = loadSidecar(ladderPath);
  const durationS = numberOption(values.duration, '--duration', (n) => n > 0, 'a positive number of seconds') ?? DEFAULT_SESSION_DURATION_S;
  const maxBufferS = numberOption(values['max-buffer'], '--max-buffer', (n) => n > 0, 'a positive number of seconds');
  const sammy = jsonObject(values.config, '--config');
  const historyKbps = numberList(values['history-kbps'], '--history-kbps');
  const qoe = simulateSession({
    trace,
    sidecar,
    durationS,
    arm: armFactory(arm, {
      ...(maxBufferS === undefined ? {} : { maxBufferS }),
      ...(sammy === undefined ? {} : { sammy }),
      ...(historyKbps === undefined ? {} : { historyKbps }),
    }),
  });
  qoe.config.ladder = ladderPath;
  qoe.config.defaultLatencyMs = latencyMs ?? DEFAULT_LATENCY_MS;
  if (trace.format === 'mahimahi') qoe.config.mahimahiBinMs = binMs ?? DEFAULT_MAHIMAHI_BIN_MS;
  qoe.config.traceOffsetS = traceOffsetS;
  qoe.config.linkEfficiency = linkEfficiency;
  qoe.config.traceMeanKbps = meanBandwidthKbps(trace, qoe.sim.lastArrivalS);
  if (values.json) console.log(JSON.stringify(qoe));
  else console.log(formatSession(qoe, basename(ladderPath)));
  return 0;
}

runMain(main);
