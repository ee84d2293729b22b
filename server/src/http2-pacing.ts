// Pacing over HTTP/2 (--http2; docs/server-contract.md "HTTP/2"). Every stream of a
// connection shares its TCP socket, and SO_MAX_PACING_RATE caps the socket, not a
// stream. The rule: while streams have body left to send, the connection's cap is
// the sum of their applied rates (rtp after the spiral guard and clamping); while
// any of them has no rate (an unpaced segment, a manifest, the player page,
// /metrics) there is no cap, so an unpaced response is never slowed by a paced
// neighbour; with none left, no cap. The cap is recomputed whenever that set changes.
//
// "Body left to send" ends when the stream's last byte has left the socket, not when
// Node handed it to the kernel: the send buffer holds seconds of a paced body. Each
// stream is marked with the connection's byte count at the moment its last byte was
// given to the kernel (TCP_INFO: bytes sent for the first time + bytes not yet sent);
// it has left once the kernel has sent that many. A paced body's last byte is held
// back as on HTTP/1.1 (tail.ts): its share is removed once the rest has left, and only
// then is the byte written, so the departure time the last paced skb leaves behind is
// one byte long.
//
// How the capped rate divides between paced streams is HTTP/2's business: nghttp2
// sends DATA frames round-robin between streams that have data and window, so streams
// get equal parts of the sum, whatever their rtp (measured: docs/server-contract.md).
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import type { Http2ServerResponse, Http2Session, ServerHttp2Stream } from 'node:http2';
import { pipeline, Transform, type Readable, type TransformCallback } from 'node:stream';
import { NO_REQUEST, rawQueryOf, readRateRequest, type RateRequest } from './cmcd.js';
import { DRAIN_POLL_MAX_MS, drainPollMs } from './drain.js';
import type { ServerMetrics } from './metrics.js';
import type { ServerOptions } from './options.js';
import { socketFd, UNLIMITED_PACING_RATE, type SocketControl } from './socket.js';
import { appliedRateKbps, type GuardDecision } from './spiral-guard.js';
import { TAIL_BYTES, TailGate } from './tail.js';
import type { TcpInfo } from './tcpinfo.js';
import { buildTelemetry, type PacingOutcome } from './telemetry.js';
import { bytesPerSToKbps, kbpsToBytesPerS } from './units.js';

export interface Http2PacingContext {
  options: ServerOptions;
  control: SocketControl;
  metrics: ServerMetrics;
  log: FastifyBaseLogger;
}

/**
 * The looks for a stream's last byte follow the server's one drain policy (drain.ts),
 * with a paced wait never longer than its unpaced ceiling: a connection's cap changes as
 * its streams come and go, so what the next look expects can be stale within a second.
 */
const leavePollMs = (unsentBytes: number, rateBytesPerS: number | null, deliveryRateBytesPerS = 0): number =>
  drainPollMs({ unsentBytes, rateBytesPerS, deliveryRateBytesPerS, pacedMaxMs: DRAIN_POLL_MAX_MS });

/**
 * A stream's life: `sending` (its body goes to the session), `leaving` (all of it is in
 * the kernel; it keeps its share until the kernel has sent it), `tailDue` (a paced
 * body's held-back last byte is written, the share already gone), `done` (line written).
 */
type Phase = 'sending' | 'leaving' | 'tailDue' | 'done';

interface StreamResponse {
  request: FastifyRequest;
  stream: ServerHttp2Stream;
  connection: Connection;
  /** A media response writes a telemetry line; other responses only count for the cap. */
  media: boolean;
  status: number;
  path: string;
  rate: RateRequest;
  outcome: PacingOutcome;
  appliedRateKbps: number | null;
  /** The stream's part of the connection's cap; null: unpaced (the connection is then uncapped). */
  rateBytesPerS: number | null;
  guard: GuardDecision | null;
  hasBody: boolean;
  phase: Phase;
  /** The connection's count of bytes given to the kernel once this stream's last one was (see top). */
  leftAtBytes: number | null;
  /** Resolves the held-back last byte's wait (paced bodies). */
  releaseTail: (() => void) | null;
  counter: ByteCounter | null;
  start: TcpInfo | null;
  startMs: number;
  /** TCP_INFO just before this stream's share was removed (its max_pacing_rate goes in the line). */
  capInfo: TcpInfo | null;
  aborted: boolean;
}

interface Connection {
  session: Http2Session;
  /** Streams with body left to send: the cap is decided from these. */
  sending: Set<StreamResponse>;
  /** The cap set on the socket now; UNLIMITED_PACING_RATE when none. */
  capBytesPerS: bigint;
  pollTimer: NodeJS.Timeout | null;
  remoteAddress: string | null;
  remotePort: number | null;
}

/** Counts the body bytes that reach the stream (the telemetry line's `bytes`). */
class ByteCounter extends Transform {
  bytes = 0;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.bytes += chunk.length;
    callback(null, chunk);
  }
}

/** Whether a request arrived over HTTP/2 (with --http2, HTTP/1.1 clients share the port). */
export function isHttp2Request(request: FastifyRequest): boolean {
  return request.raw.httpVersionMajor === 2;
}

function isReadable(payload: unknown): payload is Readable {
  return typeof (payload as Readable | null)?.pipe === 'function';
}

/** Whether a reply has body bytes to send (fastify hands onSend a string, a Buffer or a stream). */
function hasBytes(payload: unknown): boolean {
  if (isReadable(payload)) return true;
  if (typeof payload === 'string') return payload.length > 0;
  return Buffer.isBuffer(payload) && payload.length > 0;
}

/** Bytes the kernel has been given on the connection: sent once (retransmissions aside) plus not yet sent. */
function bytesGiven(info: TcpInfo): number {
  return info.bytesSent - info.bytesRetrans + info.notsentBytes;
}

export class Http2Pacing {
  readonly #ctx: Http2PacingContext;
  readonly #connections = new WeakMap<Http2Session, Connection>();
  readonly #active = new Set<StreamResponse>();

  constructor(ctx: Http2PacingContext) {
    this.#ctx = ctx;
  }

  /** Streams still holding pacing state (a share of a cap, a timer); 0 when idle. */
  get activeStreams(): number {
    return this.#active.size;
  }

  /** At shutdown: ends every stream still in flight (a line for media, aborted unless its body was handed over). */
  finishAll(): void {
    for (const s of [...this.#active]) {
      if (s.phase === 'sending') s.aborted = true;
      this.#finish(s);
    }
  }

  /**
   * The onSend hook of every HTTP/2 response: media responses get their rate and
   * Server-Timing, every response with a body joins its connection's set until its last
   * byte has left. Returns the body to send (a paced body with its last byte held back).
   */
  onSend(request: FastifyRequest, reply: FastifyReply, payload: unknown, mediaRoute: boolean): unknown {
    const stream = (reply.raw as unknown as Http2ServerResponse).stream;
    const session = stream?.session;
    // A stream the client has reset already (its RST came with the request) gets nothing.
    if (stream === undefined || session === undefined || stream.destroyed || stream.closed) return payload;
    const media = mediaRoute && reply.statusCode < 400;
    const hasBody = media
      ? request.method === 'GET' && (reply.statusCode === 200 || reply.statusCode === 206) && isReadable(payload)
      : request.method !== 'HEAD' && hasBytes(payload);
    if (!media && !hasBody) return payload;
    const connection = this.#connectionOf(session);
    const fd = socketFd(session.socket);
    const start = fd === null ? null : this.#ctx.control.readTcpInfo(fd);
    const rate = media ? this.#readRate(request) : NO_REQUEST;
    const s: StreamResponse = {
      request,
      stream,
      connection,
      media,
      status: reply.statusCode,
      path: request.url.split('?', 1)[0]!,
      rate,
      ...this.#decide(rate, hasBody && media, fd),
      hasBody,
      phase: 'sending',
      leftAtBytes: null,
      releaseTail: null,
      counter: null,
      start,
      startMs: performance.now(),
      capInfo: null,
      aborted: false,
    };
    this.#active.add(s);
    this.#ctx.metrics.activeH2Streams.set(this.#active.size);
    stream.once('close', () => this.#onStreamClose(s));
    if (media) {
      reply.header('server-timing', `pace;dur=${s.appliedRateKbps ?? 0};desc="${s.outcome}"`);
      reply.header('timing-allow-origin', '*');
    }
    if (!hasBody) return payload;
    connection.sending.add(s);
    this.#updateCap(connection);
    // A body handed over entirely (paced: all but its held-back byte) starts leaving.
    let body = payload;
    if (s.outcome === 'paced') {
      this.#ctx.metrics.pacedResponses.inc({ mechanism: 'kernel' });
      if (s.guard?.raised) this.#ctx.metrics.spiralGuardRaised.inc({ basis: s.guard.floor!.basis });
      const gate: TailGate = new TailGate(TAIL_BYTES, () => this.#whenAllButTailGiven(s, gate));
      s.counter = new ByteCounter();
      // Errors surface through the counter, which fastify is sending.
      pipeline(payload as Readable, gate, s.counter, () => {});
      body = s.counter;
    } else {
      if (media) {
        s.counter = new ByteCounter();
        pipeline(payload as Readable, s.counter, () => {});
        body = s.counter;
      }
      stream.once('finish', () => this.#startLeaving(s));
    }
    return body;
  }

  #connectionOf(session: Http2Session): Connection {
    let connection = this.#connections.get(session);
    if (connection === undefined) {
      const created: Connection = {
        session,
        sending: new Set(),
        capBytesPerS: UNLIMITED_PACING_RATE,
        pollTimer: null,
        remoteAddress: session.socket?.remoteAddress ?? null,
        remotePort: session.socket?.remotePort ?? null,
      };
      // Streams end with their session; this is for one whose 'close' Node never emits.
      session.once('close', () => {
        for (const s of [...this.#active]) if (s.connection === created) this.#onStreamClose(s);
        if (created.pollTimer !== null) clearTimeout(created.pollTimer);
        created.pollTimer = null;
      });
      this.#connections.set(session, created);
      connection = created;
    }
    return connection;
  }

  /** The request's CMCD rate; a malformed payload is counted (its line says why). */
  #readRate(request: FastifyRequest): RateRequest {
    const { options, metrics } = this.#ctx;
    const rate = readRateRequest(request.headers, rawQueryOf(request.url), options.limits.maxCmcdBytes);
    if (rate.problem !== null && rate.rtpKbps === null) metrics.errors.inc({ kind: 'cmcd' });
    return rate;
  }

  #decide(rate: RateRequest, pacedBody: boolean, fd: number | null): Pick<StreamResponse, 'outcome' | 'appliedRateKbps' | 'rateBytesPerS' | 'guard'> {
    const { options, control } = this.#ctx;
    const unpaced = { outcome: 'unpaced' as PacingOutcome, appliedRateKbps: null, rateBytesPerS: null, guard: null };
    if (!pacedBody || rate.rtpKbps === null) return unpaced;
    if (!options.pacing) return { ...unpaced, outcome: 'disabled' };
    if (fd === null || !control.available) return { ...unpaced, outcome: 'unavailable' };
    const { rateKbps, guard } = appliedRateKbps(rate.rtpKbps, rate, options);
    return { outcome: 'paced', appliedRateKbps: rateKbps, rateBytesPerS: kbpsToBytesPerS(rateKbps), guard };
  }

  /** Sets the connection's cap from the streams that have body left to send (the rule at the top). */
  #updateCap(connection: Connection): void {
    let sumBytesPerS = 0;
    let uncapped = connection.sending.size === 0;
    for (const s of connection.sending) {
      if (s.rateBytesPerS === null) uncapped = true;
      else sumBytesPerS += s.rateBytesPerS;
    }
    const cap = uncapped ? UNLIMITED_PACING_RATE : BigInt(Math.round(sumBytesPerS));
    if (cap === connection.capBytesPerS) return;
    const fd = socketFd(connection.session.socket);
    if (fd === null) return;
    const result = this.#ctx.control.setMaxPacingRate(fd, cap);
    if (result.ok) connection.capBytesPerS = cap;
    else this.#ctx.metrics.errors.inc({ kind: 'setsockopt' });
  }

  /**
   * A paced body's wait before its last byte: until everything before it is in the
   * kernel (the stream's write callbacks run once the TLS layer has written), then
   * until the kernel has sent it; then its share goes and the byte is written.
   */
  #whenAllButTailGiven(s: StreamResponse, gate: TailGate): Promise<void> {
    return new Promise((resolve) => {
      s.releaseTail = resolve;
      const poll = (): void => {
        if (s.phase !== 'sending') return;
        const counter = s.counter!;
        const inNodeBytes = gate.readableLength + counter.writableLength + counter.readableLength + s.stream.writableLength;
        if (inNodeBytes === 0) return this.#startLeaving(s);
        setTimeout(poll, leavePollMs(inNodeBytes, s.rateBytesPerS));
      };
      poll();
    });
  }

  /** Every byte of the stream (but a held-back last one) is in the kernel: it keeps its share until they have left. */
  #startLeaving(s: StreamResponse): void {
    if (s.phase !== 'sending') return;
    const fd = socketFd(s.connection.session.socket);
    const info = fd === null ? null : this.#ctx.control.readTcpInfo(fd);
    if (info === null) return this.#left(s, null);
    s.phase = 'leaving';
    s.leftAtBytes = bytesGiven(info);
    this.#pollConnection(s.connection, info);
  }

  /** Ends the shares of the streams whose bytes have left, and polls again for the rest. */
  #pollConnection(connection: Connection, known: TcpInfo | null = null): void {
    if (connection.pollTimer !== null) clearTimeout(connection.pollTimer);
    connection.pollTimer = null;
    const leaving = [...connection.sending].filter((s) => s.phase === 'leaving');
    if (leaving.length === 0) return;
    const fd = socketFd(connection.session.socket);
    const info = known ?? (fd === null ? null : this.#ctx.control.readTcpInfo(fd));
    if (info === null) {
      for (const s of leaving) this.#left(s, null);
      return;
    }
    const sentBytes = info.bytesSent - info.bytesRetrans;
    let waitBytes = Infinity;
    for (const s of leaving) {
      if (sentBytes >= s.leftAtBytes!) this.#left(s, info);
      else waitBytes = Math.min(waitBytes, s.leftAtBytes! - sentBytes);
    }
    if (waitBytes === Infinity) return;
    const cap = connection.capBytesPerS;
    const waitMs = leavePollMs(waitBytes, cap === UNLIMITED_PACING_RATE ? null : Number(cap), info.deliveryRateBytesPerS);
    connection.pollTimer = setTimeout(() => this.#pollConnection(connection), waitMs);
  }

  /** The stream's bytes have left (or can no longer be followed): its share ends; a held-back last byte goes now. */
  #left(s: StreamResponse, info: TcpInfo | null): void {
    s.capInfo = info;
    this.#dropShare(s);
    const release = s.releaseTail;
    s.releaseTail = null;
    if (release !== null && !s.stream.destroyed) {
      s.phase = 'tailDue';
      // The line is written when the stream closes, after the byte.
      return release();
    }
    release?.();
    this.#finish(s);
  }

  #dropShare(s: StreamResponse): void {
    const { connection } = s;
    if (!connection.sending.delete(s)) return;
    this.#updateCap(connection);
  }

  /**
   * The stream closed. Before its body was handed over (a reset, its session's end) it
   * is aborted; what it had given the kernel still leaves, so on a live connection it
   * keeps its share until those bytes have left, as a finished stream does.
   */
  #onStreamClose(s: StreamResponse): void {
    if (s.phase === 'done') return;
    const live = !s.connection.session.destroyed;
    if (s.phase === 'sending') {
      const reset = s.stream.rstCode !== undefined && s.stream.rstCode !== 0;
      if (reset || s.hasBody) s.aborted = true;
      if (s.hasBody && live) return this.#startLeaving(s);
    }
    if (s.phase === 'leaving' && live) return;
    this.#finish(s);
  }

  /** Ends the stream's hold on its connection: removes its share and writes its line. */
  #finish(s: StreamResponse): void {
    if (s.phase === 'done') return;
    s.phase = 'done';
    this.#dropShare(s);
    if (s.releaseTail !== null) {
      // The gate is being torn down with the stream: let its wait end.
      s.releaseTail();
      s.releaseTail = null;
    }
    this.#active.delete(s);
    this.#ctx.metrics.activeH2Streams.set(this.#active.size);
    if (s.connection.sending.size === 0 && s.connection.pollTimer !== null) {
      clearTimeout(s.connection.pollTimer);
      s.connection.pollTimer = null;
    }
    if (!s.media) return;
    const fd = socketFd(s.connection.session.socket);
    const readInfo = (fd === null ? null : this.#ctx.control.readTcpInfo(fd)) ?? s.capInfo;
    // The line reports the cap the stream was sent under, read before its share ended.
    const end = readInfo !== null && s.capInfo !== null ? { ...readInfo, maxPacingRateBytesPerS: s.capInfo.maxPacingRateBytesPerS } : readInfo;
    const durationMs = performance.now() - s.startMs;
    const bytes = s.counter?.bytes ?? 0;
    this.#record(s, bytes, durationMs);
    this.#log(s, bytes, durationMs, end);
  }

  #record(s: StreamResponse, bytes: number, durationMs: number): void {
    const { metrics } = this.#ctx;
    metrics.mediaBytes.inc(bytes);
    if (s.hasBody) metrics.bodyResponses.inc({ body_path: 'stream' });
    if (s.outcome !== 'paced' || s.aborted || durationMs <= 0 || bytes === 0) return;
    const achievedKbps = bytesPerSToKbps(bytes / (durationMs / 1000));
    metrics.requestedRateKbps.observe(s.appliedRateKbps!);
    metrics.achievedRateKbps.observe(achievedKbps);
    metrics.achievedRatio.observe(achievedKbps / s.appliedRateKbps!);
  }

  /** The stream's "media response" line (docs/server-contract.md): TCP fields are its connection's. */
  #log(s: StreamResponse, bytes: number, durationMs: number, end: TcpInfo | null): void {
    const telemetry = buildTelemetry({
      path: s.path,
      status: s.status,
      bytes,
      bodyPath: s.hasBody ? 'stream' : null,
      durationMs,
      rtpKbps: s.rate.rtpKbps,
      appliedRateKbps: s.appliedRateKbps,
      pacing: s.outcome,
      burstPackets: this.#ctx.options.burstPackets,
      plan: null,
      start: s.start,
      end,
      remoteAddress: s.connection.remoteAddress,
      remotePort: s.connection.remotePort,
      aborted: s.aborted,
      cmcdProblem: s.rate.problem,
      guard: s.guard,
      protocol: 'h2',
      streamId: s.stream.id,
    });
    // The kernel makes the trains of a shared connection: no bursts are planned per stream.
    s.request.log.info({ ...telemetry, burstMechanism: s.outcome === 'paced' ? 'kernel' : null }, 'media response');
  }
}
