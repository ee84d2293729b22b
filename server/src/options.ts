import { statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { invalidOption } from './errors.js';
import { DEFAULT_SPIRAL_GUARD_MULTIPLIER } from './spiral-guard.js';
import { checkTlsFiles, type TlsFiles } from './tls.js';

/**
 * How bursts of at most `burstPackets` are made (README "Burst size"):
 * `kernel` trusts TCP's own pacing (trains are TSO-autosized), `app` writes
 * `burstPackets` x MSS at a time, timed at the pace rate, `auto` uses `app` only
 * where the kernel's predicted train for this socket is longer than the knob.
 */
export type BurstMode = 'auto' | 'app' | 'kernel';

/**
 * How a media body reaches the socket (README "Body path"): `sendfile`, by the
 * kernel straight from the file, with a sender thread doing the waiting (the
 * server refuses to start without it); `stream`, read into Node's buffers and
 * written by the event loop; `auto`, sendfile wherever it works, else stream.
 * Encrypted connections always stream.
 */
export type BodyPathOption = 'auto' | 'sendfile' | 'stream';

export interface ServerLimits {
  /** Largest request head Node accepts; larger gets 431 (slowloris, header floods). */
  maxHeaderBytes: number;
  /** A request head must arrive within this time (slowloris). */
  headersTimeoutMs: number;
  /** The whole request must arrive within this time. */
  requestTimeoutMs: number;
  /** An idle keep-alive connection is closed after this time. */
  keepAliveTimeoutMs: number;
  /** A connection with no progress in either direction is closed after this time. */
  idleTimeoutMs: number;
  /** CMCD headers (or query value) longer than this are ignored. */
  maxCmcdBytes: number;
  /**
   * HTTP/2 streams one connection may have open at once (SETTINGS_MAX_CONCURRENT_STREAMS);
   * streams over it are refused (RST_STREAM REFUSED_STREAM). Each open media stream holds
   * a file descriptor and up to about 2 MB of body in Node's buffers while its client
   * does not read, so this bounds what one connection can hold, as one response at a
   * time bounds an HTTP/1.1 connection.
   */
  maxConcurrentStreams: number;
}

export interface ServerOptions {
  /** The DASH ladder served under /media/. */
  mediaDir: string;
  /** The built player page served at /. */
  playerDir: string;
  host: string;
  port: number;
  /** At most this many packets leave back-to-back in a paced response (thesis 2.5.5: 4). */
  burstPackets: number;
  burstMode: BurstMode;
  bodyPath: BodyPathOption;
  /** `false` (--pacing off) serves everything unpaced: the control arm's server. */
  pacing: boolean;
  /**
   * The spiral guard (`src/spiral-guard.ts`): a paced response is never paced below
   * `spiralGuardMultiplier` x the request's CMCD `tb` (else `br`). On by default: a
   * stock player's rtp follows the bitrate it plays now, and honouring it walks the
   * player down the ladder (thesis 2.2.3). `false` (--spiral-guard off) applies the
   * request as sent, for experiments that need exactly that.
   */
  spiralGuard: boolean;
  /** The guard's floor as a multiple of `tb` (or `br`); at least Eq. 2.1's at an empty buffer. */
  spiralGuardMultiplier: number;
  /** Requested rates are clamped to [minRateKbps, maxRateKbps]. */
  minRateKbps: number;
  maxRateKbps: number;
  /** Every log line, including one per media response, as JSON lines. */
  logFile: string | null;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'silent';
  /** `null`: same-origin only (no CORS headers); `*` or one origin: CORS on. */
  corsOrigin: string | null;
  /** Processes serving the port (`npm run serve` only; buildApp() is always one). 1: no cluster. */
  workers: number;
  /** `null`: plain HTTP; otherwise HTTP/1.1 over TLS with this PEM certificate chain and key. */
  tls: TlsFiles | null;
  /**
   * HTTP/2 over TLS beside HTTP/1.1 (ALPN picks; a client that does not offer h2 gets
   * HTTP/1.1). Needs `tls`: browsers speak HTTP/2 only over TLS. Streams share their
   * connection's cap (src/http2-pacing.ts).
   */
  http2: boolean;
  limits: ServerLimits;
}

export type ServerOptionsInput = Partial<Omit<ServerOptions, 'limits'>> & {
  mediaDir: string;
  limits?: Partial<ServerLimits>;
};

const SERVER_PACKAGE_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..');

export const DEFAULT_LIMITS: ServerLimits = {
  maxHeaderBytes: 16 * 1024,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 10_000,
  idleTimeoutMs: 60_000,
  maxCmcdBytes: 2048,
  // RFC 9113 6.5.2 recommends no fewer than 100; Node's default is unlimited.
  maxConcurrentStreams: 100,
};

export const DEFAULT_SERVER_OPTIONS: Omit<ServerOptions, 'mediaDir'> = {
  playerDir: resolve(SERVER_PACKAGE_DIR, '../player/dist'),
  host: '127.0.0.1',
  port: 8080,
  burstPackets: 4,
  burstMode: 'auto',
  bodyPath: 'auto',
  pacing: true,
  spiralGuard: true,
  spiralGuardMultiplier: DEFAULT_SPIRAL_GUARD_MULTIPLIER,
  // 100 kbps is CTA-5004's rtp granularity; below it a client could hold a
  // connection open for minutes per segment.
  minRateKbps: 100,
  maxRateKbps: 10_000_000,
  logFile: null,
  logLevel: 'info',
  corsOrigin: null,
  // One process per core: each paced socket costs event-loop wakeups, and one
  // process would leave the other cores idle (src/workers.ts).
  workers: availableParallelism(),
  tls: null,
  http2: false,
  limits: DEFAULT_LIMITS,
};

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'silent'] as const;
const BURST_MODES = ['auto', 'app', 'kernel'] as const;
/** More processes than this only add memory: each holds a whole server. */
export const MAX_WORKERS = 256;
const BODY_PATHS = ['auto', 'sendfile', 'stream'] as const;
/** Above this the kernel builds no larger trains anyway (gso_max_segs is 16 bits). */
export const MAX_BURST_PACKETS = 65535;
/** 2^53 bits/s expressed in kbps keeps every derived byte rate an exact double. */
const MAX_RATE_KBPS = 1e12;
/**
 * Eq. 2.1's multiple of the bitrate is 1 / beta at an empty buffer, beta in (0, 1]: a
 * floor below 1x the bitrate protects nothing. Above 100x the guard would unpace
 * every player in effect.
 */
const SPIRAL_GUARD_MULTIPLIER_RANGE = { min: 1, max: 100 };

function integerIn(option: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw invalidOption(option, value, `an integer from ${min} to ${max}`);
  }
  return value;
}

function oneOf<T extends string>(option: string, value: unknown, accepted: readonly T[]): T {
  if (!accepted.includes(value as T)) throw invalidOption(option, value, accepted.join(', '));
  return value as T;
}

function numberIn(option: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) {
    throw invalidOption(option, value, `a number from ${min} to ${max}`);
  }
  return value;
}

function onOff(option: string, value: unknown): boolean {
  if (typeof value !== 'boolean') throw invalidOption(option, value, 'true (on) or false (off)');
  return value;
}

function nonEmptyString(option: string, value: unknown, what: string): string {
  if (typeof value !== 'string' || value.length === 0 || value.includes('\0')) throw invalidOption(option, value, what);
  return value;
}

function directory(option: string, value: unknown): string {
  const path = resolve(nonEmptyString(option, value, 'a directory path'));
  let isDirectory = false;
  try {
    isDirectory = statSync(path).isDirectory();
  } catch {
    // reported below with the option's name
  }
  if (!isDirectory) throw invalidOption(option, value, 'an existing directory');
  return path;
}

/** `--cors-origin`: null, `*` or one origin (what nginx's launcher checks too); throws a coded option error otherwise. */
export function checkCorsOrigin(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (value === '*') return '*';
  const accepted = '"*" or one origin such as http://127.0.0.1:8080 (scheme, host, optional port; no path)';
  if (typeof value !== 'string') throw invalidOption('corsOrigin', value, accepted);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalidOption('corsOrigin', value, accepted);
  }
  if (!['http:', 'https:'].includes(url.protocol) || url.origin !== value.replace(/\/$/, '')) {
    throw invalidOption('corsOrigin', value, accepted);
  }
  return url.origin;
}

function limits(input: Partial<ServerLimits> | undefined): ServerLimits {
  const merged = { ...DEFAULT_LIMITS, ...input };
  const result: ServerLimits = {
    maxHeaderBytes: integerIn('limits.maxHeaderBytes', merged.maxHeaderBytes, 1024, 1024 * 1024),
    headersTimeoutMs: integerIn('limits.headersTimeoutMs', merged.headersTimeoutMs, 100, 600_000),
    requestTimeoutMs: integerIn('limits.requestTimeoutMs', merged.requestTimeoutMs, 100, 600_000),
    keepAliveTimeoutMs: integerIn('limits.keepAliveTimeoutMs', merged.keepAliveTimeoutMs, 100, 600_000),
    idleTimeoutMs: integerIn('limits.idleTimeoutMs', merged.idleTimeoutMs, 100, 3_600_000),
    maxCmcdBytes: integerIn('limits.maxCmcdBytes', merged.maxCmcdBytes, 64, 64 * 1024),
    maxConcurrentStreams: integerIn('limits.maxConcurrentStreams', merged.maxConcurrentStreams, 1, 10_000),
  };
  // Node refuses a headers timeout longer than the request timeout.
  if (result.headersTimeoutMs > result.requestTimeoutMs) {
    throw invalidOption('limits.headersTimeoutMs', result.headersTimeoutMs, `at most limits.requestTimeoutMs (${result.requestTimeoutMs})`);
  }
  return result;
}

/**
 * Validates every option before anything starts, fills defaults, and throws a
 * ServerError (code SAMMY_SERVER_INVALID_OPTION) naming the option, the value
 * and what is accepted.
 */
export function resolveServerOptions(input: ServerOptionsInput): ServerOptions {
  const o = { ...DEFAULT_SERVER_OPTIONS, ...input };
  const minRateKbps = integerIn('minRateKbps', o.minRateKbps, 1, MAX_RATE_KBPS);
  const maxRateKbps = integerIn('maxRateKbps', o.maxRateKbps, 1, MAX_RATE_KBPS);
  if (maxRateKbps < minRateKbps) throw invalidOption('maxRateKbps', maxRateKbps, `at least minRateKbps (${minRateKbps})`);
  const tls = o.tls === null || o.tls === undefined ? null : checkTlsFiles(o.tls);
  const bodyPath = oneOf('bodyPath', o.bodyPath, BODY_PATHS);
  // Over TLS Node encrypts every byte in user space: the kernel cannot send the file as it is.
  if (tls !== null && bodyPath === 'sendfile') throw invalidOption('bodyPath', bodyPath, 'auto or stream with --tls-cert/--tls-key (HTTPS bodies always stream)');
  const http2 = onOff('http2', o.http2);
  if (http2 && tls === null) throw invalidOption('http2', http2, 'false without --tls-cert/--tls-key (HTTP/2 is served over TLS only: give a certificate and its key)');
  return {
    mediaDir: directory('mediaDir', input.mediaDir),
    playerDir: resolve(nonEmptyString('playerDir', o.playerDir, 'a directory path')),
    host: nonEmptyString('host', o.host, 'a host name or IP address'),
    port: integerIn('port', o.port, 0, 65535),
    burstPackets: integerIn('burstPackets', o.burstPackets, 1, MAX_BURST_PACKETS),
    burstMode: oneOf('burstMode', o.burstMode, BURST_MODES),
    bodyPath,
    pacing: onOff('pacing', o.pacing),
    spiralGuard: onOff('spiralGuard', o.spiralGuard),
    spiralGuardMultiplier: numberIn('spiralGuardMultiplier', o.spiralGuardMultiplier, SPIRAL_GUARD_MULTIPLIER_RANGE.min, SPIRAL_GUARD_MULTIPLIER_RANGE.max),
    minRateKbps,
    maxRateKbps,
    logFile: o.logFile === null ? null : resolve(nonEmptyString('logFile', o.logFile, 'a file path')),
    logLevel: oneOf('logLevel', o.logLevel, LOG_LEVELS),
    corsOrigin: checkCorsOrigin(o.corsOrigin),
    workers: integerIn('workers', o.workers, 1, MAX_WORKERS),
    tls,
    http2,
    limits: limits(input.limits),
  };
}
