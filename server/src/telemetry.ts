// One structured log line per media response (the lab reads these back from
// --log FILE). Field names carry their units; TCP fields come from TCP_INFO read
// when the response started and when its last byte left the socket.
import { readFileSync } from 'node:fs';
import type { BurstPlan } from './burst.js';
import type { GuardDecision, GuardFloor } from './spiral-guard.js';
import type { TcpInfo } from './tcpinfo.js';
import { bytesPerSToKbps } from './units.js';

/** What the Server-Timing `desc` and the log say about pacing. */
export type PacingOutcome =
  /** SO_MAX_PACING_RATE set to the clamped rtp for this response. */
  | 'paced'
  /** The request asked for no rate (or its CMCD was ignored). */
  | 'unpaced'
  /** The server runs with --pacing off. */
  | 'disabled'
  /** The request asked for a rate but setsockopt is unavailable or failed. */
  | 'unavailable';

/** The HTTP version a response went out on, as ALPN names it. */
export type HttpProtocol = 'http/1.1' | 'h2';

/** How a media body reached the socket (README "Body path"). */
export type BodyPath = 'sendfile' | 'stream';

export interface ResponseTelemetry {
  msg: 'media response';
  /** Milliseconds since the epoch when the line was written (pino's `time`). */
  time: number;
  /** URL path, without the query string. */
  path: string;
  status: number;
  /** Response body bytes handed to the socket. */
  bytes: number;
  /** `sendfile`: the kernel moved the body from the file; `stream`: Node wrote it; null: no body (HEAD, 304). */
  bodyPath: BodyPath | null;
  /** From the first byte queued to the last byte sent (not acknowledged). */
  durationMs: number;
  /** rtp as requested (kbps, before clamping); null if none or ignored. */
  rtpKbps: number | null;
  /** The rate applied (kbps, clamped to [min, max]); null if unpaced. */
  appliedRateKbps: number | null;
  pacing: PacingOutcome;
  /** bytes / durationMs, in kbps. */
  achievedRateKbps: number | null;
  /** The --burst-packets knob; null in the edge's lines (edge/: it has none, its trains are the kernel's). */
  burstPackets: number | null;
  /** How the trains were shaped: the kernel's own, or application-timed writes; null if unpaced. */
  burstMechanism: BurstPlan['mechanism'] | null;
  /** Upper bound on back-to-back packets this response was planned with; null if unpaced. */
  trainPackets: number | null;
  /** Smoothed RTT when the response ended. */
  rttUs: number | null;
  minRttUs: number | null;
  /** Retransmitted segments during this response. */
  retransmits: number | null;
  /** Retransmitted segments over the connection's life. */
  totalRetrans: number | null;
  /** The kernel's last delivery-rate sample. */
  deliveryRateBytesPerS: number | null;
  /** Bytes retransmitted during this response. */
  bytesRetrans: number | null;
  /** Bytes sent during this response, retransmissions and headers included. */
  bytesSent: number | null;
  /** TCP_INFO max_pacing_rate just before the response's cap was removed. */
  maxPacingRateBytesPerS: number | 'unlimited' | null;
  cwndPackets: number | null;
  remoteAddress: string | null;
  remotePort: number | null;
  /** The client went away (or the stream failed) before the last byte. */
  aborted: boolean;
  /**
   * `http/1.1` or `h2` (ALPN's names); with `h2` the TCP fields are the connection's,
   * which its streams share. Absent from the edge's lines (nginx writes its own).
   */
  protocol?: HttpProtocol;
  /** The HTTP/2 stream's id; null over HTTP/1.1; absent from the native servers' lines. */
  streamId?: number | null;
  /** Why CMCD was ignored or what was noted about it. */
  cmcdProblem: string | null;
  /** The spiral guard's floor for this response (kbps); null when the guard is off, the response unpaced, or the request has no `tb`/`br`. */
  guardFloorKbps: number | null;
  /** The request field the floor came from. */
  guardBasis: GuardFloor['basis'] | null;
  /** The guard raised the request's rtp to its floor (`appliedRateKbps` is then the floor, clamped). */
  guardRaised: boolean;
}

export type TelemetryInputs = Pick<
  ResponseTelemetry,
  'path' | 'status' | 'bytes' | 'bodyPath' | 'durationMs' | 'rtpKbps' | 'appliedRateKbps' | 'pacing' | 'burstPackets' | 'remoteAddress' | 'remotePort' | 'aborted' | 'cmcdProblem'
> & {
  plan: BurstPlan | null;
  /** What the spiral guard did (null: off or unpaced). */
  guard: GuardDecision | null;
  /** TCP_INFO when the response started and when it ended (null if unreadable). */
  start: TcpInfo | null;
  end: TcpInfo | null;
  /** Default `http/1.1`, no stream id. */
  protocol?: HttpProtocol;
  streamId?: number;
};

/** The log line's fields (pino adds `time`, `msg` and `level`). */
export function buildTelemetry(i: TelemetryInputs): Omit<ResponseTelemetry, 'time' | 'msg'> {
  const { start, end } = i;
  const both = start !== null && end !== null;
  return {
    path: i.path,
    status: i.status,
    bytes: i.bytes,
    bodyPath: i.bodyPath,
    durationMs: Math.round(i.durationMs * 1000) / 1000,
    rtpKbps: i.rtpKbps,
    appliedRateKbps: i.appliedRateKbps,
    pacing: i.pacing,
    achievedRateKbps: i.durationMs > 0 && i.bytes > 0 ? Math.round(bytesPerSToKbps(i.bytes / (i.durationMs / 1000))) : null,
    burstPackets: i.burstPackets,
    burstMechanism: i.plan?.mechanism ?? null,
    trainPackets: i.plan?.trainPackets ?? null,
    rttUs: end?.rttUs ?? null,
    minRttUs: end?.minRttUs ?? null,
    retransmits: both ? end.totalRetrans - start.totalRetrans : null,
    totalRetrans: end?.totalRetrans ?? null,
    deliveryRateBytesPerS: end?.deliveryRateBytesPerS ?? null,
    bytesRetrans: both ? end.bytesRetrans - start.bytesRetrans : null,
    bytesSent: both ? end.bytesSent - start.bytesSent : null,
    maxPacingRateBytesPerS: end === null ? null : (end.maxPacingRateBytesPerS ?? 'unlimited'),
    cwndPackets: end?.sndCwndPackets ?? null,
    remoteAddress: i.remoteAddress,
    remotePort: i.remotePort,
    aborted: i.aborted,
    protocol: i.protocol ?? 'http/1.1',
    streamId: i.streamId ?? null,
    cmcdProblem: i.cmcdProblem,
    guardFloorKbps: i.guard?.floor?.floorKbps ?? null,
    guardBasis: i.guard?.floor?.basis ?? null,
    guardRaised: i.guard?.raised ?? false,
  };
}

/**
 * The media-response lines of a server log (`--log FILE`, pino JSON lines); other
 * lines are skipped, and so is a torn last line of a server that was killed.
 */
export function parseTelemetry(text: string): ResponseTelemetry[] {
  const out: ResponseTelemetry[] = [];
  for (const line of text.split('\n')) {
    if (!line.includes('"media response"')) continue;
    try {
      const r = JSON.parse(line) as ResponseTelemetry;
      if (r.msg === 'media response') out.push(r);
    } catch {
      // a torn last line when the server was killed
    }
  }
  return out;
}

/** The media-response lines of a log file; none when the file is not there (yet). */
export function readTelemetry(logFile: string): ResponseTelemetry[] {
  let text: string;
  try {
    text = readFileSync(logFile, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  return parseTelemetry(text);
}
