// Application-informed pacing per response (thesis 2.3.2): before the first body
// byte the socket gets SO_MAX_PACING_RATE = the clamped CMCD rtp; when the response
// is over the cap is removed, so the next request on a keep-alive connection is
// unpaced unless it asks. "Over" means the last byte has left the socket, not
// Node's 'finish' (which fires once the body is in the kernel's send buffer: up to
// 4 MB that would otherwise go out unpaced), or the connection closed.
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import type { Socket } from 'node:net';
import { PassThrough, pipeline, type Readable } from 'node:stream';
import type { BodySender } from './body-sender.js';
import { BurstPacer } from './burst-pacer.js';
import { APP_KERNEL_CAP_FACTOR, planBursts, predictKernelTrainPackets, type BurstPlan, type KernelTsoSettings } from './burst.js';
import { rawQueryOf, readRateRequest, type RateRequest } from './cmcd.js';
import { FileBody } from './file-body.js';
import type { DeviceGsoTable } from './kernel-settings.js';
import type { ServerMetrics } from './metrics.js';
import type { ServerOptions } from './options.js';
import { socketFd, UNLIMITED_PACING_RATE, type SocketControl } from './socket.js';
import { appliedRateKbps, type GuardDecision } from './spiral-guard.js';
import { TAIL_BYTES, TailGate } from './tail.js';
import type { TcpInfo } from './tcpinfo.js';
import { buildTelemetry, type BodyPath, type PacingOutcome } from './telemetry.js';
import { plaintextBytesForWire } from './tls.js';
import { bytesPerSToKbps, kbpsToBytesPerS } from './units.js';

export interface PacingContext {
  options: ServerOptions;
  control: SocketControl;
  metrics: ServerMetrics;
  log: FastifyBaseLogger;
  kernel: KernelTsoSettings;
  devices: DeviceGsoTable;
  /** The zero-copy path's sender thread; null when bodies always stream. */
  sender: BodySender | null;
}

/** MSS assumed when TCP_INFO is unavailable (Ethernet, IPv4, timestamps). */
const FALLBACK_MSS_BYTES = 1448;
/**
 * A tail that has not moved for this long (a client that stopped reading) is logged
 * and released anyway; normally the keep-alive timeout closes such a connection first.
 */
const MAX_DRAIN_STALL_MS = 120_000;
/** Drain polls are spaced by the expected remaining send time, within these bounds. */
const DRAIN_POLL_MIN_MS = 1;
const DRAIN_POLL_MAX_MS = 1000;
/**
 * A paced body sent by the kernel keeps about this much of its rate queued in the
 * socket (TCP_NOTSENT_LOWAT), at least PACED_QUEUE_MIN_BYTES (two of the kernel's
 * largest trains). sendfile would otherwise fill the whole send buffer (up to 4 MB,
 * seconds at a paced rate) at once: bytes that still leave after the client is gone
 * and that the next response on the connection waits behind. A quarter second keeps
 * the sender's wake-ups to a few per second per connection.
 */
const PACED_QUEUE_S = 0.25;
const PACED_QUEUE_MIN_BYTES = 128 * 1024;
/** Assumed send rate of an unpaced tail until the kernel has a delivery-rate sample. */
const UNPACED_DRAIN_RATE_BYTES_PER_S = 1_000_000;

interface SocketState {
  /** A cap is (or may still be) set on this socket. */
  paced: boolean;
  /** The response that owns the socket's pacing state until its bytes have left. */
  active: MediaResponse | null;
  /**
   * Pipelined responses waiting for `active` to end, in request order. Node sends
   * them in order anyway; each body is held back until its turn, so it is paced at
   * its own rate from its own first byte.
   */
  queued: MediaResponse[];
}

interface MediaResponse extends RateDecision {
  request: FastifyRequest;
  reply: FastifyReply;
  socket: Socket;
  state: SocketState;
  path: string;
  rate: RateRequest;
  pacer: BurstPacer | null;
  /** The body (a file stream, or a FileBody for the kernel to send), until the response starts sending it. */
  pending: Readable | null;
  /** The body when the kernel sends it (README "Body path"). */
  fileBody: FileBody | null;
  /** For a queued response whose body streams: the body fastify sends, fed once the response starts. */
  gate: PassThrough | null;
  /** A paced body's last byte, held until the rest has left (tail.ts). */
  tailGate: TailGate | null;
  /** The wait for the rest to leave before the last byte; ended early if the response ends. */
  tailWait: { timer: NodeJS.Timeout | null; resolve: () => void } | null;
  /** TCP_INFO just before the cap was removed ahead of the last byte (its max_pacing_rate goes in the line). */
  capInfo: TcpInfo | null;
  /** The response has started: its rate is set, its bytes counted from here. */
  started: boolean;
  start: TcpInfo | null;
  startMs: number;
  /** When the tail last moved (or Node handed it to the kernel). */
  drainProgressMs: number;
  startBytesWritten: number;
  aborted: boolean;
  remoteAddress: string | null;
  remotePort: number | null;
  /** The latest TCP_INFO read, for when the connection is gone by the end. */
  lastInfo: TcpInfo | null;
  lastNotsentBytes: number;
  drainTimer: NodeJS.Timeout | null;
  /** This response's listener on its connection's 'close', removed when it ends. */
  onSocketClose: ((hadError?: boolean) => void) | null;
  done: boolean;
}

/** What #decide and #apply made of one response's rate. */
interface RateDecision {
  outcome: PacingOutcome;
  appliedRateKbps: number | null;
  rateBytesPerS: number | null;
  plan: BurstPlan | null;
  /** What the spiral guard did to the request (null: off, or the response is not paced). */
  guard: GuardDecision | null;
}

const UNPACED: RateDecision = { outcome: 'unpaced', appliedRateKbps: null, rateBytesPerS: null, plan: null, guard: null };

function isReadable(payload: unknown): payload is Readable {
  return typeof (payload as Readable | null)?.pipe === 'function';
}

/**
 * Every body byte is in the kernel's hands: Node has written the last one, or the
 * sender has (a client may read that byte and leave before Node hears the body ended).
 */
function bodyHandedOver(response: MediaResponse): boolean {
  return response.reply.raw.writableFinished || response.fileBody?.complete === true;
}

export class PacingController {
  readonly #ctx: PacingContext;
  readonly #sockets = new WeakMap<Socket, SocketState>();
  readonly #active = new Set<MediaResponse>();
  readonly #warned = new Set<string>();

  constructor(ctx: PacingContext) {
    this.#ctx = ctx;
    if (ctx.options.pacing && !ctx.control.available) {
      this.#warnOnce('unavailable', `pacing unavailable, serving unpaced: ${ctx.control.unavailableReason}`);
    }
  }

  /** Responses still holding pacing state (timers, caps); 0 when idle. */
  get activeResponses(): number {
    return this.#active.size;
  }

  /** At shutdown: writes the line of every response still in flight (cut ones as aborted). */
  finishAll(): void {
    for (const response of [...this.#active]) {
      if (!bodyHandedOver(response)) response.aborted = true;
      this.#finish(response, null);
    }
  }

  #warnOnce(key: string, message: string, details: object = {}): void {
    if (this.#warned.has(key)) return;
    this.#warned.add(key);
    this.#ctx.log.warn(details, message);
  }

  #stateOf(socket: Socket): SocketState {
    let state = this.#sockets.get(socket);
    if (state === undefined) {
      const created: SocketState = { paced: false, active: null, queued: [] };
      this.#sockets.set(socket, created);
      // The client closed its side. If our bytes are still unsent it is leaving
      // early; either way, read the final TCP_INFO while the descriptor exists.
      socket.once('end', () => {
        const response = created.active;
        const fd = socketFd(socket);
        if (response === null || fd === null) return;
        const info = this.#ctx.control.readTcpInfo(fd);
        if (info === null) return;
        response.lastInfo = info;
        if (info.notsentBytes > 0) response.aborted = true;
      });
      state = created;
    }
    return state;
  }

  #mssOf(start: TcpInfo | null): number {
    return start?.sndMssBytes || FALLBACK_MSS_BYTES;
  }

  #planFor(socket: Socket, start: TcpInfo | null, rateBytesPerS: number): BurstPlan {
    const mssBytes = this.#mssOf(start);
    const { options, kernel, devices } = this.#ctx;
    return planBursts({
      mode: options.burstMode,
      burstPackets: options.burstPackets,
      rateBytesPerS,
      mssBytes,
      kernelTrainPackets: predictKernelTrainPackets({
        rateBytesPerS,
        mssBytes,
        minRttUs: start?.minRttUs ?? 0,
        kernel,
        device: devices.forLocalAddress(socket.localAddress),
      }),
    });
  }

  #setRate(fd: number, rateBytesPerS: bigint): boolean {
    const result = this.#ctx.control.setMaxPacingRate(fd, rateBytesPerS);
    if (result.ok) return true;
    this.#ctx.metrics.errors.inc({ kind: 'setsockopt' });
    this.#warnOnce(`setsockopt:${result.error}`, `${result.error}: serving unpaced`);
    return false;
  }

  /**
   * The media routes' onSend hook: reads the CMCD rate, caps the socket before the
   * first body byte, adds Server-Timing, and returns the body to send (re-timed
   * into bursts when the plan says so).
   */
  onSend(request: FastifyRequest, reply: FastifyReply, payload: unknown): unknown {
    // Refusals and errors are not media responses: no pacing, no telemetry line.
    if (reply.statusCode >= 400) return payload;
    const socket = request.raw.socket;
    const state = this.#stateOf(socket);
    const hasBody = request.method === 'GET' && (reply.statusCode === 200 || reply.statusCode === 206) && isReadable(payload);
    const response = this.#newResponse(request, reply, state, hasBody ? (payload as Readable) : null);
    // Node sends pipelined responses in request order and gives each the socket
    // when the one before has been handed over; the file lookups, and so these
    // hooks, may finish in any order. A response owns the socket's pacing once Node
    // has given it the socket and the previous one's bytes have left.
    const assigned = reply.raw.socket === socket;
    if (assigned && state.active !== null) this.#endIfLeft(state.active);
    let body = payload;
    if (assigned && state.active === null) {
      const started = this.#begin(response, true);
      if (hasBody) body = started;
    } else if (hasBody) {
      // Behind a response still being sent: the body waits its turn (a FileBody
      // sends nothing until it is begun).
      Object.assign(response, this.#decide(socket, this.#readStartInfo(socketFd(socket)), response));
      if (response.fileBody === null) {
        response.gate = new PassThrough();
        body = response.gate;
      }
      state.queued.push(response);
      if (!assigned) reply.raw.once('socket', () => this.#onSocketAssigned(response));
    } else this.#begin(response, false);
    reply.header('server-timing', `pace;dur=${response.appliedRateKbps ?? 0};desc="${response.outcome}"`);
    reply.header('timing-allow-origin', '*');
    this.#track(response);
    return body;
  }

  /** A media response's state before it starts (`body`: what fastify was given to send, or null). */
  #newResponse(request: FastifyRequest, reply: FastifyReply, state: SocketState, body: Readable | null): MediaResponse {
    const socket = request.raw.socket;
    return {
      request,
      reply,
      socket,
      state,
      path: request.url.split('?', 1)[0]!,
      rate: this.#readRate(request),
      ...UNPACED,
      pacer: null,
      pending: body,
      fileBody: body instanceof FileBody ? body : null,
      gate: null,
      tailGate: null,
      tailWait: null,
      capInfo: null,
      started: false,
      start: null,
      startMs: performance.now(),
      drainProgressMs: Infinity,
      startBytesWritten: 0,
      aborted: false,
      remoteAddress: socket.remoteAddress ?? null,
      remotePort: socket.remotePort ?? null,
      lastInfo: null,
      lastNotsentBytes: Infinity,
      drainTimer: null,
      onSocketClose: null,
      done: false,
    };
  }

  /** Ends a response whose bytes have all left its socket (the TCP_INFO read for that is its line's). */
  #endIfLeft(response: MediaResponse): void {
    if (!response.started || !bodyHandedOver(response)) return;
    const fd = socketFd(response.socket);
    const info = fd === null ? null : this.#ctx.control.readTcpInfo(fd);
    if (info === null || info.notsentBytes === 0) this.#finish(response, info);
  }

  /**
   * Starts a response: sets its rate (when it `owns` the socket's pacing; a bodiless
   * response behind another only gets its own line) and returns the body to send
   * (null when it has none).
   */
  #begin(response: MediaResponse, owns: boolean): unknown {
    const { socket, state } = response;
    const fd = socketFd(socket);
    const start = this.#readStartInfo(fd);
    Object.assign(response, { start, started: true, startMs: performance.now(), startBytesWritten: socket.bytesWritten ?? 0 });
    if (!owns) return null;
    state.active = response;
    const decision = this.#apply(fd, state, this.#decide(socket, start, response));
    Object.assign(response, decision);
    if (decision.outcome !== 'paced' && state.paced && fd !== null && this.#setRate(fd, UNLIMITED_PACING_RATE)) state.paced = false;
    const pending = response.pending;
    response.pending = null;
    if (pending === null) return null;
    if (decision.plan !== null) this.#ctx.metrics.pacedResponses.inc({ mechanism: decision.plan.mechanism });
    if (decision.guard?.raised) this.#ctx.metrics.spiralGuardRaised.inc({ basis: decision.guard.floor!.basis });
    if (response.fileBody !== null) return this.#beginFileBody(response, decision, start);
    const { body, pacer } = this.#bodyFor(pending, decision, start);
    response.pacer = pacer;
    return decision.outcome === 'paced' ? this.#withTail(response, body as Readable) : body;
  }

  /** The body with its last byte held back until the rest has left and the cap is gone (tail.ts). */
  #withTail(response: MediaResponse, body: Readable): TailGate {
    const gate = new TailGate(TAIL_BYTES, () => this.#releaseTail(response));
    response.tailGate = gate;
    // Errors surface through the gate, which fastify is sending.
    pipeline(body, gate, () => {});
    return gate;
  }

  /**
   * Resolves once every byte before the held-back last byte has left the socket
   * (Node's buffers empty and TCP_INFO notsent_bytes 0), after removing the cap; at
   * once when the response has ended another way. Polls spaced by the expected
   * remaining send time, as the drain wait does.
   */
  #releaseTail(response: MediaResponse): Promise<void> {
    return new Promise((resolve) => {
      const wait = { timer: null as NodeJS.Timeout | null, resolve };
      response.tailWait = wait;
      const poll = (): void => {
        wait.timer = null;
        if (response.done || response.socket.destroyed) return this.#endTailWait(response);
        const fd = socketFd(response.socket);
        const inNodeBytes = (response.tailGate?.readableLength ?? 0) + response.reply.raw.writableLength;
        const info = inNodeBytes === 0 && fd !== null ? this.#ctx.control.readTcpInfo(fd) : null;
        if (fd === null || (inNodeBytes === 0 && (info === null || info.notsentBytes === 0))) {
          this.#liftBeforeTail(response, fd, info);
          return this.#endTailWait(response);
        }
        const pendingBytes = inNodeBytes + (info?.notsentBytes ?? 0);
        const rate = response.rateBytesPerS ?? UNPACED_DRAIN_RATE_BYTES_PER_S;
        wait.timer = setTimeout(poll, Math.min(DRAIN_POLL_MAX_MS, Math.max(DRAIN_POLL_MIN_MS, (pendingBytes / rate) * 1000)));
      };
      poll();
    });
  }

  #endTailWait(response: MediaResponse): void {
    const wait = response.tailWait;
    if (wait === null) return;
    response.tailWait = null;
    if (wait.timer !== null) clearTimeout(wait.timer);
    wait.resolve();
  }

  /**
   * Removes the cap before the last byte is written: it still leaves at its paced
   * time (the departure time the skb before it set), and the ACK it brings back
   * raises the socket's pacing rate, so the next response starts unpaced.
   */
  #liftBeforeTail(response: MediaResponse, fd: number | null, info: TcpInfo | null): void {
    const { state } = response;
    if (fd === null || state.active !== response) return;
    response.capInfo = info ?? this.#ctx.control.readTcpInfo(fd);
    if (state.paced && this.#setRate(fd, UNLIMITED_PACING_RATE)) state.paced = false;
  }

  /**
   * The kernel sends the body; application bursts are timed by the sender thread. A
   * paced body's last byte takes the same step as on the stream path (tail.ts): the
   * sender sends all but it and reports once those have left the socket; the cap is
   * then removed and Node writes the byte. The sender also reports when that byte has
   * left, so nothing here polls.
   */
  #beginFileBody(response: MediaResponse, decision: RateDecision, start: TcpInfo | null): FileBody {
    const fileBody = response.fileBody!;
    const { plan, rateBytesPerS } = decision;
    const burst =
      plan?.mechanism === 'app' && rateBytesPerS !== null
        ? { rateBytesPerS, chunkBytes: plan.chunkBytes, strict: plan.strict, mssBytes: this.#mssOf(start) }
        : null;
    const notsentLimitBytes = rateBytesPerS === null ? null : Math.max(PACED_QUEUE_MIN_BYTES, Math.round(rateBytesPerS * PACED_QUEUE_S));
    const liftCap = decision.outcome === 'paced' ? () => this.#liftBeforeTail(response, socketFd(response.socket), null) : null;
    fileBody.begin({ sender: this.#ctx.sender!, socket: response.socket, response: response.reply.raw, burst, notsentLimitBytes, liftCap });
    return fileBody;
  }

  /** Starts the queued response Node is sending now, once the socket's active one has ended. */
  #beginNext(state: SocketState): void {
    const next = state.queued.find((r) => r.reply.raw.socket === r.socket);
    if (next === undefined) return;
    state.queued = state.queued.filter((r) => r !== next);
    if (next.socket.destroyed) {
      next.aborted = true;
      return this.#finish(next, null);
    }
    const body = this.#begin(next, true) as Readable;
    // Errors surface through the gate, which fastify is sending.
    if (next.gate !== null) pipeline(body, next.gate, () => {});
  }

  /** Node gave a queued response the socket: it starts now unless an earlier one is still leaving. */
  #onSocketAssigned(response: MediaResponse): void {
    if (response.done || response.started) return;
    const { state } = response;
    if (state.active !== null) this.#endIfLeft(state.active);
    else this.#beginNext(state);
  }

  /** The request's CMCD rate; a malformed payload is counted and logged once. */
  #readRate(request: FastifyRequest): RateRequest {
    const { options, metrics } = this.#ctx;
    const rate = readRateRequest(request.headers, rawQueryOf(request.url), options.limits.maxCmcdBytes);
    if (rate.problem !== null && rate.rtpKbps === null) {
      metrics.errors.inc({ kind: 'cmcd' });
      this.#warnOnce('cmcd', `ignoring malformed CMCD (further cases only in "media response" lines): ${rate.problem}`);
    }
    return rate;
  }

  #readStartInfo(fd: number | null): TcpInfo | null {
    const { control, metrics } = this.#ctx;
    const start = fd === null ? null : control.readTcpInfo(fd);
    if (start === null && fd !== null && control.available) {
      metrics.errors.inc({ kind: 'tcp_info' });
      this.#warnOnce('tcp_info', 'TCP_INFO unreadable: telemetry without TCP fields, bursts planned for MSS 1448');
    }
    return start;
  }

  /** The rate a response asks for, clamped, and how its bursts will be made (nothing set yet). */
  #decide(socket: Socket, start: TcpInfo | null, response: MediaResponse): RateDecision {
    const { options, control } = this.#ctx;
    const rtpKbps = response.rate.rtpKbps;
    if (response.pending === null || rtpKbps === null) return UNPACED;
    if (!options.pacing) return { ...UNPACED, outcome: 'disabled' };
    if (socketFd(socket) === null || !control.available) return { ...UNPACED, outcome: 'unavailable' };
    const { rateKbps: kbps, guard } = appliedRateKbps(rtpKbps, response.rate, options);
    const bytesPerS = kbpsToBytesPerS(kbps);
    return { outcome: 'paced', appliedRateKbps: kbps, rateBytesPerS: bytesPerS, plan: this.#planFor(socket, start, bytesPerS), guard };
  }

  /** Caps the socket as decided (or says why it could not). */
  #apply(fd: number | null, state: SocketState, decision: RateDecision): RateDecision {
    if (decision.outcome !== 'paced' || decision.plan === null || decision.rateBytesPerS === null) return decision;
    const capBytesPerS = decision.plan.mechanism === 'app' ? APP_KERNEL_CAP_FACTOR * decision.rateBytesPerS : decision.rateBytesPerS;
    if (fd === null || !this.#setRate(fd, BigInt(Math.round(capBytesPerS)))) return { ...UNPACED, outcome: 'unavailable' };
    state.paced = true;
    return decision;
  }

  /** The body to send: the file stream, re-timed into application bursts when the plan says so. */
  #bodyFor(payload: unknown, decision: RateDecision, start: TcpInfo | null): { body: unknown; pacer: BurstPacer | null } {
    const { plan, rateBytesPerS } = decision;
    if (plan === null || rateBytesPerS === null || plan.mechanism !== 'app') return { body: payload, pacer: null };
    // Over TLS each write becomes records that carry a header and a tag: the write is
    // made that much smaller so the burst on the wire is still N x MSS.
    const chunkBytes = this.#ctx.options.tls === null ? plan.chunkBytes : plaintextBytesForWire(plan.chunkBytes);
    const pacer = new BurstPacer({ rateBytesPerS, chunkBytes, strict: plan.strict, mssBytes: this.#mssOf(start) });
    // Errors surface through the pacer, which fastify is sending.
    pipeline(payload as Readable, pacer, () => {});
    return { body: pacer, pacer };
  }

  /**
   * Holds the response's pacing state until it ends, whichever comes first: its
   * last byte leaves the socket, the response closes early, or the connection
   * closes (also for a response still queued behind another on the connection,
   * whose own 'close' Node never emits). A client that left before this point
   * (during the file lookup) has already fired every event: end it now.
   */
  #track(response: MediaResponse): void {
    const { socket, reply } = response;
    this.#active.add(response);
    this.#ctx.metrics.activeResponses.set(this.#active.size);
    if (socket.destroyed || reply.raw.destroyed) {
      response.aborted = true;
      return this.#finish(response, null);
    }
    // A reset (or other error) means the client went away. A clean close after the
    // body was handed over is the server's own, for a client that sent
    // "Connection: close": the kernel still sends the tail, at the socket's cap.
    // Whether the body was handed over is known once the sender (if any) has
    // reported on it.
    response.onSocketClose = (hadError?: boolean) => {
      // A queued response ends after the one ahead of it (#finish drops it then), so
      // the lines keep the order of the requests.
      if (!response.started && response.state.active !== null) return;
      this.#whenBodySettled(response, () => {
        if (hadError === true || !bodyHandedOver(response)) response.aborted = true;
        this.#finish(response, null);
      });
    };
    socket.once('close', response.onSocketClose);
    reply.raw.once('close', () =>
      this.#whenBodySettled(response, () => {
        response.drainProgressMs = performance.now();
        response.aborted = !bodyHandedOver(response);
        if (response.aborted) this.#finish(response, null);
        else this.#waitForDrain(response);
      }),
    );
  }

  #whenBodySettled(response: MediaResponse, fn: () => void): void {
    if (response.fileBody === null) fn();
    else response.fileBody.whenSettled(fn);
  }

  #waitForDrain(response: MediaResponse): void {
    response.drainTimer = null;
    if (response.done) return;
    // The sender reported the moment the last byte left (or that it stopped waiting for
    // it: the connection closed), and read TCP_INFO then (Node's own descriptor may be
    // gone already: "Connection: close").
    const sent = response.fileBody?.endTcpInfo ?? null;
    if (sent !== null) return this.#finish(response, sent);
    const fd = socketFd(response.socket);
    if (fd === null) return this.#finish(response, null);
    const info = this.#ctx.control.readTcpInfo(fd);
    if (info !== null) response.lastInfo = info;
    const nowMs = performance.now();
    if (info === null || info.notsentBytes === 0 || nowMs - response.drainProgressMs > MAX_DRAIN_STALL_MS) {
      return this.#finish(response, info);
    }
    if (info.notsentBytes < response.lastNotsentBytes) {
      response.drainProgressMs = nowMs;
      // Node counts the kernel draining its buffer as idleness: keep a tail that is
      // still moving from being cut by the keep-alive timer.
      response.socket.setTimeout(this.#ctx.options.limits.keepAliveTimeoutMs);
    }
    response.lastNotsentBytes = info.notsentBytes;
    const rate = response.rateBytesPerS ?? (info.deliveryRateBytesPerS || UNPACED_DRAIN_RATE_BYTES_PER_S);
    const sendMs = (info.notsentBytes / rate) * 1000 + this.#tailDelayMs(response);
    const waitMs = Math.min(DRAIN_POLL_MAX_MS, Math.max(DRAIN_POLL_MIN_MS, sendMs));
    response.drainTimer = setTimeout(() => this.#waitForDrain(response), waitMs);
  }

  /**
   * How long a paced body's held-back last byte may wait after everything before it
   * has left: the last skb before it moved the socket's departure time ahead by its
   * length at the capped rate (tail.ts), and skbs are at most one planned train. Polling
   * before then finds it still unsent; 0 for a response without a held-back byte.
   */
  #tailDelayMs(response: MediaResponse): number {
    const { plan, rateBytesPerS } = response;
    if (response.tailGate === null || plan === null || rateBytesPerS === null) return 0;
    const capBytesPerS = plan.mechanism === 'app' ? APP_KERNEL_CAP_FACTOR * rateBytesPerS : rateBytesPerS;
    return ((plan.trainPackets * this.#mssOf(response.start)) / capBytesPerS) * 1000;
  }

  /** Ends a response's hold on its socket: removes its cap, logs its line. `end`: TCP_INFO if already read. */
  #finish(response: MediaResponse, end: TcpInfo | null): void {
    if (response.done) return;
    response.done = true;
    if (response.drainTimer !== null) clearTimeout(response.drainTimer);
    response.drainTimer = null;
    if (response.onSocketClose !== null) response.socket.removeListener('close', response.onSocketClose);
    response.onSocketClose = null;
    if (!response.started) return this.#dropQueued(response);
    this.#endTailWait(response);
    response.fileBody?.release();
    if (response.aborted) {
      if (response.pacer !== null && !response.pacer.destroyed) response.pacer.destroy();
      if (response.tailGate !== null && !response.tailGate.destroyed) response.tailGate.destroy();
    }
    const { control, metrics } = this.#ctx;
    const durationMs = performance.now() - response.startMs;
    const fd = socketFd(response.socket);
    const readInfo = end ?? response.fileBody?.endTcpInfo ?? (fd === null ? null : control.readTcpInfo(fd)) ?? response.lastInfo;
    // The line reports the cap the response was sent under, also when it was removed before the last byte.
    const endInfo = readInfo !== null && response.capInfo !== null ? { ...readInfo, maxPacingRateBytesPerS: response.capInfo.maxPacingRateBytesPerS } : readInfo;
    const { state } = response;
    if (state.active === response) {
      state.active = null;
      if (state.paced && fd !== null && this.#setRate(fd, UNLIMITED_PACING_RATE)) state.paced = false;
    }
    this.#active.delete(response);
    metrics.activeResponses.set(this.#active.size);

    const raw = response.reply.raw as unknown as { _header?: string | null };
    const headerBytes = typeof raw._header === 'string' ? Buffer.byteLength(raw._header) : 0;
    const nodeBytes = Math.max(0, (response.socket.bytesWritten ?? 0) - response.startBytesWritten - headerBytes);
    const bytes = nodeBytes + (response.fileBody?.sentBytes ?? 0);
    metrics.mediaBytes.inc(bytes);
    const bodyPath = this.#bodyPathOf(response);
    if (bodyPath !== null) metrics.bodyResponses.inc({ body_path: bodyPath });
    if (response.outcome === 'paced' && !response.aborted && durationMs > 0 && bytes > 0) {
      const achievedKbps = bytesPerSToKbps(bytes / (durationMs / 1000));
      metrics.requestedRateKbps.observe(response.appliedRateKbps!);
      metrics.achievedRateKbps.observe(achievedKbps);
      metrics.achievedRatio.observe(achievedKbps / response.appliedRateKbps!);
    }
    this.#log(response, bytes, durationMs, endInfo);
    if (state.active !== null) return;
    if (response.socket.destroyed) {
      // The connection is gone: what waited behind this response never starts.
      for (const queued of [...state.queued]) this.#finish(queued, null);
    } else this.#beginNext(state);
  }

  #bodyPathOf(response: MediaResponse): BodyPath | null {
    if (response.request.method !== 'GET' || (response.reply.statusCode !== 200 && response.reply.statusCode !== 206)) return null;
    return response.fileBody !== null ? 'sendfile' : 'stream';
  }

  /** Ends a queued response that never started (its connection went first). */
  #dropQueued(response: MediaResponse): void {
    const { state } = response;
    state.queued = state.queued.filter((r) => r !== response);
    response.pending?.destroy();
    response.gate?.destroy();
    response.aborted = true;
    this.#active.delete(response);
    this.#ctx.metrics.activeResponses.set(this.#active.size);
    this.#log(response, 0, 0, null);
  }

  /** The response's "media response" line (docs/server-contract.md). */
  #log(response: MediaResponse, bytes: number, durationMs: number, end: TcpInfo | null): void {
    const telemetry = buildTelemetry({
      path: response.path,
      status: response.reply.statusCode,
      bytes,
      bodyPath: this.#bodyPathOf(response),
      durationMs,
      rtpKbps: response.rate.rtpKbps,
      appliedRateKbps: response.appliedRateKbps,
      pacing: response.outcome,
      burstPackets: this.#ctx.options.burstPackets,
      plan: response.plan,
      start: response.start,
      end,
      remoteAddress: response.remoteAddress,
      remotePort: response.remotePort,
      aborted: response.aborted,
      cmcdProblem: response.rate.problem,
      guard: response.guard,
    });
    response.request.log.info(telemetry, 'media response');
  }
}
