// Application-informed pacing per response (thesis 2.3.2): before the first body
// byte the socket gets SO_MAX_PACING_RATE = the clamped CMCD rtp; when the response
// is over the cap is removed, so the next request on a keep-alive connection is
// unpaced unless it asks. "Over" means the last byte has left the socket, not
// Node's 'finish' (which fires once the body is in the kernel's send buffer: up to
// 4 MB that would otherwise go out unpaced), or the connection closed.
//
// Each response is a small state machine (docs/server-contract.md "Response
// lifecycle"): queued -> sending [-> tailHeld -> sending] -> draining -> done, with
// done reachable from every phase and carrying whether the response was aborted.
// What a phase needs (a timer, a held stream, the drain watch) lives in that phase's
// record; #moveTo is the one place a response changes phase.
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import type { Socket } from 'node:net';
import { PassThrough, pipeline, type Readable } from 'node:stream';
import type { BodySender } from './body-sender.js';
import { BurstPacer } from './burst-pacer.js';
import { APP_KERNEL_CAP_FACTOR, planBursts, predictKernelTrainPackets, type BurstPlan, type KernelTsoSettings } from './burst.js';
import { rawQueryOf, readRateRequest, type RateRequest } from './cmcd.js';
import { DRAIN_POLL_MAX_MS, drainStep, MAX_DRAIN_STALL_MS, newDrainWatch, type DrainWatch } from './drain.js';
import { FileBody } from './file-body.js';
import type { DeviceGsoTable } from './kernel-settings.js';
import type { ServerMetrics } from './metrics.js';
import type { ServerOptions } from './options.js';
import { assertPhaseMove, type PhaseName } from './response-phase.js';
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
 * The Node server looks at a paced tail at least once a second, not when it can have
 * left (the drain policy's paced ceiling, which the native modules use): a look that
 * finds the tail moving is what keeps the connection's keep-alive timer from cutting it.
 */
const NODE_PACED_DRAIN_POLL_MAX_MS = DRAIN_POLL_MAX_MS;
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

/** A started response: what its line reports, from its start on (carried from phase to phase). */
interface Run {
  readonly decision: RateDecision;
  readonly start: TcpInfo | null;
  readonly startMs: number;
  readonly startBytesWritten: number;
  /** TCP_INFO just before the cap was removed ahead of the last byte (its max_pacing_rate goes in the line). */
  capInfo: TcpInfo | null;
  /** The latest TCP_INFO read, for when the connection is gone by the end. */
  lastInfo: TcpInfo | null;
}

/** The streams a stream body is sent through (none on the sendfile path, or without a body). */
interface BodyStreams {
  pacer: BurstPacer | null;
  /** A paced body's last byte, held until the rest has left (tail.ts). */
  tailGate: TailGate | null;
}

const NO_STREAMS: BodyStreams = { pacer: null, tailGate: null };

type Phase =
  /**
   * Not started: waits for Node to give it the socket and for the response ahead of it
   * to end. `decision` is provisional (its Server-Timing header); `body` is what
   * fastify was given, held back; `gate` is what fastify sends instead when it streams.
   */
  | { name: 'queued'; decision: RateDecision; body: Readable | null; gate: PassThrough | null }
  /**
   * The rate is set and the body is going out. `peerLeft`: the client closed its side
   * while bytes were still unsent, so the response ends aborted unless its body is
   * found handed over when it closes.
   */
  | { name: 'sending'; run: Run; streams: BodyStreams; peerLeft: boolean }
  /** A paced stream body's last byte waits for the rest to leave (tail.ts); `release` lets it go. */
  | { name: 'tailHeld'; run: Run; streams: BodyStreams; peerLeft: boolean; watch: DrainWatch; timer: NodeJS.Timeout | null; release: () => void }
  /** Node is done with the response; the drain wait looks at the socket until its bytes have left. */
  | { name: 'draining'; run: Run; peerLeft: boolean; watch: DrainWatch; timer: NodeJS.Timeout | null }
  | { name: 'done'; aborted: boolean };

type StartedPhase = Extract<Phase, { run: Run }>;
type QueuedPhase = Extract<Phase, { name: 'queued' }>;

function isStarted(phase: Phase): phase is StartedPhase {
  return phase.name === 'sending' || phase.name === 'tailHeld' || phase.name === 'draining';
}

interface MediaResponse {
  readonly request: FastifyRequest;
  readonly reply: FastifyReply;
  readonly socket: Socket;
  readonly state: SocketState;
  readonly path: string;
  readonly rate: RateRequest;
  /** The body when the kernel sends it (README "Body path"). */
  readonly fileBody: FileBody | null;
  readonly remoteAddress: string | null;
  readonly remotePort: number | null;
  /** This response's listener on its connection's 'close', removed when it ends. */
  readonly onSocketClose: (hadError?: boolean) => void;
  phase: Phase;
}

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
    for (const response of [...this.#active]) this.#end(response, null, this.#peerLeft(response) || !bodyHandedOver(response));
  }

  #warnOnce(key: string, message: string, details: object = {}): void {
    if (this.#warned.has(key)) return;
    this.#warned.add(key);
    this.#ctx.log.warn(details, message);
  }

  /**
   * The one place a response changes phase. Throws on a move the lifecycle does not
   * have (response-phase.ts). What the phase it leaves owned ends with it: the drain
   * wait's timer, and the tail wait (its held byte is let go).
   */
  #moveTo(response: MediaResponse, next: Phase): void {
    const from = response.phase;
    assertPhaseMove(from.name, next.name);
    response.phase = next;
    if ((from.name === 'draining' || from.name === 'tailHeld') && from.timer !== null) clearTimeout(from.timer);
    if (from.name === 'tailHeld') from.release();
  }

  /** The client closed its side while this response's bytes were unsent (and its body not since found handed over). */
  #peerLeft(response: MediaResponse): boolean {
    const { phase } = response;
    return isStarted(phase) && phase.peerLeft;
  }

  #stateOf(socket: Socket): SocketState {
    let state = this.#sockets.get(socket);
    if (state === undefined) {
      const created: SocketState = { paced: false, active: null, queued: [] };
      this.#sockets.set(socket, created);
      // The client closed its side. If our bytes are still unsent it is leaving
      // early; either way, read the final TCP_INFO while the descriptor exists.
      socket.once('end', () => {
        const phase = created.active?.phase;
        const fd = socketFd(socket);
        if (phase === undefined || !isStarted(phase) || fd === null) return;
        const info = this.#ctx.control.readTcpInfo(fd);
        if (info === null) return;
        phase.run.lastInfo = info;
        if (info.notsentBytes > 0) phase.peerLeft = true;
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
    const rate = this.#readRate(request);
    const body = request.method === 'GET' && (reply.statusCode === 200 || reply.statusCode === 206) && isReadable(payload) ? payload : null;
    // Node sends pipelined responses in request order and gives each the socket
    // when the one before has been handed over; the file lookups, and so these
    // hooks, may finish in any order. A response owns the socket's pacing once Node
    // has given it the socket and the previous one's bytes have left.
    const assigned = reply.raw.socket === socket;
    if (assigned && state.active !== null) this.#endIfLeft(state.active);
    const startsNow = assigned && state.active === null;
    // Behind a response still being sent, a body waits its turn (a FileBody sends
    // nothing until it is begun; a streamed one is fed through a gate later).
    const waits = !startsNow && body !== null;
    const queued: QueuedPhase = {
      name: 'queued',
      decision: waits ? this.#decide(socket, this.#readStartInfo(socketFd(socket)), rate, true) : UNPACED,
      body,
      gate: waits && !(body instanceof FileBody) ? new PassThrough() : null,
    };
    const response = this.#newResponse(request, reply, state, rate, queued);
    let sent = payload;
    if (startsNow) {
      const started = this.#begin(response, true);
      if (body !== null) sent = started;
    } else if (waits) {
      if (queued.gate !== null) sent = queued.gate;
      state.queued.push(response);
      if (!assigned) reply.raw.once('socket', () => this.#onSocketAssigned(response));
    } else this.#begin(response, false);
    const decision = this.#decisionOf(response);
    reply.header('server-timing', `pace;dur=${decision.appliedRateKbps ?? 0};desc="${decision.outcome}"`);
    reply.header('timing-allow-origin', '*');
    this.#track(response);
    return sent;
  }

  #newResponse(request: FastifyRequest, reply: FastifyReply, state: SocketState, rate: RateRequest, phase: QueuedPhase): MediaResponse {
    const socket = request.raw.socket;
    const response: MediaResponse = {
      request,
      reply,
      socket,
      state,
      path: request.url.split('?', 1)[0]!,
      rate,
      fileBody: phase.body instanceof FileBody ? phase.body : null,
      remoteAddress: socket.remoteAddress ?? null,
      remotePort: socket.remotePort ?? null,
      onSocketClose: (hadError?: boolean) => this.#onSocketClose(response, hadError),
      phase,
    };
    return response;
  }

  /** The rate decision the response is (or, queued, would be) sent under. */
  #decisionOf(response: MediaResponse): RateDecision {
    const { phase } = response;
    if (isStarted(phase)) return phase.run.decision;
    return phase.name === 'queued' ? phase.decision : UNPACED;
  }

  /** Ends a response whose bytes have all left its socket (the TCP_INFO read for that is its line's). */
  #endIfLeft(response: MediaResponse): void {
    const { phase } = response;
    if (!isStarted(phase) || !bodyHandedOver(response)) return;
    const fd = socketFd(response.socket);
    const info = fd === null ? null : this.#ctx.control.readTcpInfo(fd);
    if (info === null || info.notsentBytes === 0) this.#end(response, info, phase.peerLeft);
  }

  /**
   * Starts a queued response: sets its rate (when it `owns` the socket's pacing; a
   * bodiless response behind another only gets its own line) and returns the body
   * to send (null when it has none).
   */
  #begin(response: MediaResponse, owns: boolean): unknown {
    const queued = this.#queuedPhase(response);
    const { socket, state } = response;
    const fd = socketFd(socket);
    const start = this.#readStartInfo(fd);
    const startMs = performance.now();
    const startBytesWritten = socket.bytesWritten ?? 0;
    const sending = (decision: RateDecision, streams: BodyStreams): Phase => ({
      name: 'sending',
      run: { decision, start, startMs, startBytesWritten, capInfo: null, lastInfo: null },
      streams,
      peerLeft: false,
    });
    if (!owns) {
      this.#moveTo(response, sending(UNPACED, NO_STREAMS));
      return null;
    }
    state.active = response;
    const decision = this.#apply(fd, state, this.#decide(socket, start, response.rate, queued.body !== null));
    if (decision.outcome !== 'paced' && state.paced && fd !== null && this.#setRate(fd, UNLIMITED_PACING_RATE)) state.paced = false;
    const pending = queued.body;
    if (pending === null) {
      this.#moveTo(response, sending(decision, NO_STREAMS));
      return null;
    }
    if (decision.plan !== null) this.#ctx.metrics.pacedResponses.inc({ mechanism: decision.plan.mechanism });
    if (decision.guard?.raised) this.#ctx.metrics.spiralGuardRaised.inc({ basis: decision.guard.floor!.basis });
    if (response.fileBody !== null) {
      this.#moveTo(response, sending(decision, NO_STREAMS));
      return this.#beginFileBody(response, decision, start);
    }
    const { body, pacer } = this.#bodyFor(pending, decision, start);
    const tailGate = decision.outcome === 'paced' ? this.#withTail(response, body) : null;
    this.#moveTo(response, sending(decision, { pacer, tailGate }));
    return tailGate ?? body;
  }

  #queuedPhase(response: MediaResponse): QueuedPhase {
    const { phase } = response;
    if (phase.name !== 'queued') throw new Error(`only a queued response can start, not one ${phase.name}`);
    return phase;
  }

  /** The body with its last byte held back until the rest has left and the cap is gone (tail.ts). */
  #withTail(response: MediaResponse, body: Readable): TailGate {
    const gate = new TailGate(TAIL_BYTES, () => this.#holdTail(response));
    // Errors surface through the gate, which fastify is sending.
    pipeline(body, gate, () => {});
    return gate;
  }

  /**
   * The tail gate has the last byte and the rest of the body: resolves once every
   * byte before it has left the socket (Node's buffers empty and TCP_INFO
   * notsent_bytes 0), after removing the cap; at once when the response has ended
   * another way. Looks at the socket as the drain policy says.
   */
  #holdTail(response: MediaResponse): Promise<void> {
    return new Promise((release) => {
      const phase = response.phase;
      if (phase.name !== 'sending') return release();
      const watch = newDrainWatch({
        rateBytesPerS: phase.run.decision.rateBytesPerS,
        extraMs: 0,
        pacedMaxMs: NODE_PACED_DRAIN_POLL_MAX_MS,
        // The response is still being sent: a client that stops reading is not let go here.
        stallLimitMs: Infinity,
        progressMs: performance.now(),
      });
      this.#moveTo(response, { name: 'tailHeld', run: phase.run, streams: phase.streams, peerLeft: phase.peerLeft, watch, timer: null, release });
      this.#lookBeforeTail(response);
    });
  }

  #lookBeforeTail(response: MediaResponse): void {
    const phase = response.phase;
    if (phase.name !== 'tailHeld') return;
    phase.timer = null;
    const back = (): void => this.#moveTo(response, { name: 'sending', run: phase.run, streams: phase.streams, peerLeft: phase.peerLeft });
    const fd = socketFd(response.socket);
    if (response.socket.destroyed || fd === null) return back();
    const inNodeBytes = (phase.streams.tailGate?.readableLength ?? 0) + response.reply.raw.writableLength;
    const info = inNodeBytes === 0 ? this.#ctx.control.readTcpInfo(fd) : null;
    const step = drainStep(phase.watch, {
      unsentBytes: inNodeBytes > 0 ? inNodeBytes : (info?.notsentBytes ?? null),
      deliveryRateBytesPerS: info?.deliveryRateBytesPerS ?? 0,
      nowMs: performance.now(),
    });
    if (step.kind !== 'wait') {
      this.#liftBeforeTail(response, fd, info);
      return back();
    }
    phase.watch = step.watch;
    phase.timer = setTimeout(() => this.#lookBeforeTail(response), step.waitMs);
  }

  /**
   * Removes the cap before the last byte is written: it still leaves at its paced
   * time (the departure time the skb before it set), and the ACK it brings back
   * raises the socket's pacing rate, so the next response starts unpaced.
   */
  #liftBeforeTail(response: MediaResponse, fd: number | null, info: TcpInfo | null): void {
    const { state, phase } = response;
    if (fd === null || state.active !== response || !isStarted(phase)) return;
    phase.run.capInfo = info ?? this.#ctx.control.readTcpInfo(fd);
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
    if (next.socket.destroyed) return this.#end(next, null, true);
    const { gate } = this.#queuedPhase(next);
    const body = this.#begin(next, true) as Readable;
    // Errors surface through the gate, which fastify is sending.
    if (gate !== null) pipeline(body, gate, () => {});
  }

  /** Node gave a queued response the socket: it starts now unless an earlier one is still leaving. */
  #onSocketAssigned(response: MediaResponse): void {
    if (response.phase.name !== 'queued') return;
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
  #decide(socket: Socket, start: TcpInfo | null, rate: RateRequest, hasBody: boolean): RateDecision {
    const { options, control } = this.#ctx;
    const rtpKbps = rate.rtpKbps;
    if (!hasBody || rtpKbps === null) return UNPACED;
    if (!options.pacing) return { ...UNPACED, outcome: 'disabled' };
    if (socketFd(socket) === null || !control.available) return { ...UNPACED, outcome: 'unavailable' };
    const { rateKbps: kbps, guard } = appliedRateKbps(rtpKbps, rate, options);
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
  #bodyFor(payload: Readable, decision: RateDecision, start: TcpInfo | null): { body: Readable; pacer: BurstPacer | null } {
    const { plan, rateBytesPerS } = decision;
    if (plan === null || rateBytesPerS === null || plan.mechanism !== 'app') return { body: payload, pacer: null };
    // Over TLS each write becomes records that carry a header and a tag: the write is
    // made that much smaller so the burst on the wire is still N x MSS.
    const chunkBytes = this.#ctx.options.tls === null ? plan.chunkBytes : plaintextBytesForWire(plan.chunkBytes);
    const pacer = new BurstPacer({ rateBytesPerS, chunkBytes, strict: plan.strict, mssBytes: this.#mssOf(start) });
    // Errors surface through the pacer, which fastify is sending.
    pipeline(payload, pacer, () => {});
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
    if (socket.destroyed || reply.raw.destroyed) return this.#end(response, null, true);
    socket.once('close', response.onSocketClose);
    reply.raw.once('close', () => this.#whenBodySettled(response, () => this.#onReplyClosed(response)));
  }

  /**
   * The connection closed. A reset (or other error) means the client went away. A
   * clean close after the body was handed over is the server's own, for a client
   * that sent "Connection: close": the kernel still sends the tail, at the socket's
   * cap. Whether the body was handed over is known once the sender (if any) has
   * reported on it.
   */
  #onSocketClose(response: MediaResponse, hadError?: boolean): void {
    // A queued response ends after the one ahead of it (#end drops it then), so
    // the lines keep the order of the requests.
    if (response.phase.name === 'queued' && response.state.active !== null) return;
    this.#whenBodySettled(response, () =>
      this.#end(response, null, hadError === true || !bodyHandedOver(response) || this.#peerLeft(response)),
    );
  }

  /** Node is done with the response: cut short (aborted), or its bytes are to be waited out. */
  #onReplyClosed(response: MediaResponse): void {
    const { phase } = response;
    if (phase.name === 'done') return;
    if (phase.name === 'queued' || !bodyHandedOver(response)) return this.#end(response, null, true);
    if (phase.name !== 'sending') throw new Error(`a media response closed while ${phase.name}`);
    const { run } = phase;
    const watch = newDrainWatch({
      rateBytesPerS: run.decision.rateBytesPerS,
      extraMs: this.#tailDelayMs(run, phase.streams.tailGate !== null),
      pacedMaxMs: NODE_PACED_DRAIN_POLL_MAX_MS,
      stallLimitMs: MAX_DRAIN_STALL_MS,
      progressMs: performance.now(),
    });
    // The body was handed over: a 'end' seen while it was still being sent no longer says the client left early.
    this.#moveTo(response, { name: 'draining', run, peerLeft: false, watch, timer: null });
    this.#lookAtDrain(response);
  }

  #whenBodySettled(response: MediaResponse, fn: () => void): void {
    if (response.fileBody === null) fn();
    else response.fileBody.whenSettled(fn);
  }

  #lookAtDrain(response: MediaResponse): void {
    const phase = response.phase;
    if (phase.name !== 'draining') return;
    phase.timer = null;
    // The sender reported the moment the last byte left (or that it stopped waiting for
    // it: the connection closed), and read TCP_INFO then (Node's own descriptor may be
    // gone already: "Connection: close").
    const sent = response.fileBody?.endTcpInfo ?? null;
    if (sent !== null) return this.#end(response, sent, phase.peerLeft);
    const fd = socketFd(response.socket);
    if (fd === null) return this.#end(response, null, phase.peerLeft);
    const info = this.#ctx.control.readTcpInfo(fd);
    if (info !== null) phase.run.lastInfo = info;
    const step = drainStep(phase.watch, { unsentBytes: info?.notsentBytes ?? null, deliveryRateBytesPerS: info?.deliveryRateBytesPerS ?? 0, nowMs: performance.now() });
    // Gone, or stalled for MAX_DRAIN_STALL_MS (a client that stopped reading): released either way.
    if (step.kind !== 'wait') return this.#end(response, info, phase.peerLeft);
    // Node counts the kernel draining its buffer as idleness: keep a tail that is
    // still moving from being cut by the keep-alive timer.
    if (step.moved) response.socket.setTimeout(this.#ctx.options.limits.keepAliveTimeoutMs);
    phase.watch = step.watch;
    phase.timer = setTimeout(() => this.#lookAtDrain(response), step.waitMs);
  }

  /**
   * How long a paced body's held-back last byte may wait after everything before it
   * has left: the last skb before it moved the socket's departure time ahead by its
   * length at the capped rate (tail.ts), and skbs are at most one planned train. Polling
   * before then finds it still unsent; 0 for a response without a held-back byte.
   */
  #tailDelayMs(run: Run, heldTail: boolean): number {
    const { plan, rateBytesPerS } = run.decision;
    if (!heldTail || plan === null || rateBytesPerS === null) return 0;
    const capBytesPerS = plan.mechanism === 'app' ? APP_KERNEL_CAP_FACTOR * rateBytesPerS : rateBytesPerS;
    return ((plan.trainPackets * this.#mssOf(run.start)) / capBytesPerS) * 1000;
  }

  /**
   * Ends a response (`aborted`: cut short, by the client or the connection): removes
   * its cap, logs its line, and starts what waited behind it. `end`: TCP_INFO if
   * already read. Nothing happens to a response already done.
   */
  #end(response: MediaResponse, end: TcpInfo | null, aborted: boolean): void {
    const from = response.phase;
    if (from.name === 'done') return;
    // A response that never started always ends aborted.
    this.#moveTo(response, { name: 'done', aborted: aborted || from.name === 'queued' });
    response.socket.removeListener('close', response.onSocketClose);
    if (from.name === 'queued') return this.#dropQueued(response, from);
    const { run } = from;
    response.fileBody?.release();
    if (aborted && from.name !== 'draining') {
      const { pacer, tailGate } = from.streams;
      if (pacer !== null && !pacer.destroyed) pacer.destroy();
      if (tailGate !== null && !tailGate.destroyed) tailGate.destroy();
    }
    const { control, metrics } = this.#ctx;
    const durationMs = performance.now() - run.startMs;
    const fd = socketFd(response.socket);
    const readInfo = end ?? response.fileBody?.endTcpInfo ?? (fd === null ? null : control.readTcpInfo(fd)) ?? run.lastInfo;
    // The line reports the cap the response was sent under, also when it was removed before the last byte.
    const endInfo = readInfo !== null && run.capInfo !== null ? { ...readInfo, maxPacingRateBytesPerS: run.capInfo.maxPacingRateBytesPerS } : readInfo;
    const { state } = response;
    if (state.active === response) {
      state.active = null;
      if (state.paced && fd !== null && this.#setRate(fd, UNLIMITED_PACING_RATE)) state.paced = false;
    }
    this.#active.delete(response);
    metrics.activeResponses.set(this.#active.size);

    const raw = response.reply.raw as unknown as { _header?: string | null };
    const headerBytes = typeof raw._header === 'string' ? Buffer.byteLength(raw._header) : 0;
    const nodeBytes = Math.max(0, (response.socket.bytesWritten ?? 0) - run.startBytesWritten - headerBytes);
    const bytes = nodeBytes + (response.fileBody?.sentBytes ?? 0);
    metrics.mediaBytes.inc(bytes);
    const bodyPath = this.#bodyPathOf(response);
    if (bodyPath !== null) metrics.bodyResponses.inc({ body_path: bodyPath });
    const { decision } = run;
    if (decision.outcome === 'paced' && !aborted && durationMs > 0 && bytes > 0) {
      const achievedKbps = bytesPerSToKbps(bytes / (durationMs / 1000));
      metrics.requestedRateKbps.observe(decision.appliedRateKbps!);
      metrics.achievedRateKbps.observe(achievedKbps);
      metrics.achievedRatio.observe(achievedKbps / decision.appliedRateKbps!);
    }
    this.#log(response, { bytes, durationMs, end: endInfo, decision, start: run.start, aborted });
    if (state.active !== null) return;
    if (response.socket.destroyed) {
      // The connection is gone: what waited behind this response never starts.
      for (const queued of [...state.queued]) this.#end(queued, null, true);
    } else this.#beginNext(state);
  }

  #bodyPathOf(response: MediaResponse): BodyPath | null {
    if (response.request.method !== 'GET' || (response.reply.statusCode !== 200 && response.reply.statusCode !== 206)) return null;
    return response.fileBody !== null ? 'sendfile' : 'stream';
  }

  /** Ends a queued response that never started (its connection went first). */
  #dropQueued(response: MediaResponse, queued: QueuedPhase): void {
    const { state } = response;
    state.queued = state.queued.filter((r) => r !== response);
    queued.body?.destroy();
    queued.gate?.destroy();
    this.#active.delete(response);
    this.#ctx.metrics.activeResponses.set(this.#active.size);
    this.#log(response, { bytes: 0, durationMs: 0, end: null, decision: queued.decision, start: null, aborted: true });
  }

  /** The response's "media response" line (docs/server-contract.md). */
  #log(
    response: MediaResponse,
    line: { bytes: number; durationMs: number; end: TcpInfo | null; decision: RateDecision; start: TcpInfo | null; aborted: boolean },
  ): void {
    const { decision } = line;
    const telemetry = buildTelemetry({
      path: response.path,
      status: response.reply.statusCode,
      bytes: line.bytes,
      bodyPath: this.#bodyPathOf(response),
      durationMs: line.durationMs,
      rtpKbps: response.rate.rtpKbps,
      appliedRateKbps: decision.appliedRateKbps,
      pacing: decision.outcome,
      burstPackets: this.#ctx.options.burstPackets,
      plan: decision.plan,
      start: line.start,
      end: line.end,
      remoteAddress: response.remoteAddress,
      remotePort: response.remotePort,
      aborted: line.aborted,
      cmcdProblem: response.rate.problem,
      guard: decision.guard,
    });
    response.request.log.info(telemetry, 'media response');
  }
}
