// nginx's options, typed and defaulted in one place. Where the Node server has the
// same option its default is taken from there (DEFAULT_SERVER_OPTIONS), so a player is
// paced alike by either server; the rate bounds are checked with the ranges the module
// checks again when nginx reads its configuration (native/core/options.c). Paths are
// checked here for what would break the nginx.conf they are written into.
import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { statSync } from 'node:fs';
import { checkCorsOrigin, DEFAULT_SERVER_OPTIONS, MAX_WORKERS } from '@sammy/server/options';
import { checkTlsFiles, type TlsFiles } from '@sammy/server/tls';

export interface NginxServerOptions {
  /** The ladder, served under /media/ with the module on. */
  mediaDir: string;
  /** The built player page, served at /. */
  playerDir: string;
  host: string;
  /** 0: a port that is free when nginx starts. */
  port: number;
  /** nginx's worker_processes. */
  workers: number;
  /** `false` (--pacing off): every media response is served unpaced and says `disabled`. */
  pacing: boolean;
  /** Never pace below spiralGuardMultiplier x the request's CMCD `tb` (else `br`), as the Node server. */
  spiralGuard: boolean;
  spiralGuardMultiplier: number;
  /** Requested rates are clamped to [minRateKbps, maxRateKbps]. */
  minRateKbps: number;
  maxRateKbps: number;
  /** Read `?CMCD=` when a request has no CMCD header (the header form always counts). */
  honourQueryCmcd: boolean;
  /** Hold a paced body's last byte until the rest has left, then lift the cap (native/README.md "Per response"). */
  tailHold: boolean;
  /** The module's telemetry lines (JSON, one per media response); null: a file in nginx's temporary folder. */
  logFile: string | null;
  /** null: plain HTTP; otherwise HTTPS with this PEM certificate (chain) and key. */
  tls: TlsFiles | null;
  /** HTTP/2 beside HTTP/1.1 (TLS only). Its streams share one socket: the module caps it at the sum of their rates. */
  http2: boolean;
  /** null: same-origin only; `*` or one origin: CORS as the Node server's --cors-origin. */
  corsOrigin: string | null;
}

export type NginxServerOptionsInput = Partial<NginxServerOptions> & { mediaDir: string };

export const DEFAULT_NGINX_OPTIONS: Omit<NginxServerOptions, 'mediaDir'> = {
  playerDir: DEFAULT_SERVER_OPTIONS.playerDir,
  host: DEFAULT_SERVER_OPTIONS.host,
  port: DEFAULT_SERVER_OPTIONS.port,
  // One worker per core, as the Node server's processes (availableParallelism()).
  workers: DEFAULT_SERVER_OPTIONS.workers,
  pacing: DEFAULT_SERVER_OPTIONS.pacing,
  spiralGuard: DEFAULT_SERVER_OPTIONS.spiralGuard,
  spiralGuardMultiplier: DEFAULT_SERVER_OPTIONS.spiralGuardMultiplier,
  minRateKbps: DEFAULT_SERVER_OPTIONS.minRateKbps,
  maxRateKbps: DEFAULT_SERVER_OPTIONS.maxRateKbps,
  honourQueryCmcd: true,
  tailHold: true,
  logFile: null,
  tls: null,
  http2: false,
  corsOrigin: DEFAULT_SERVER_OPTIONS.corsOrigin,
};

/** The module refuses rates above this (2^53 bit/s in kbps: every derived byte rate stays exact). */
export const MAX_RATE_KBPS = 1e12;

export class NginxError extends Error {
  constructor(
    readonly code: 'SAMMY_NGINX_INVALID_OPTION' | 'SAMMY_NGINX_BAD_ARGS' | 'SAMMY_NGINX_UNAVAILABLE' | 'SAMMY_NGINX_FAILED',
    message: string,
  ) {
    super(message);
    this.name = 'NginxError';
  }
}

/** A bad option: names the option as the user typed it, the value and what is accepted. */
export function invalidNginxOption(flag: string, value: unknown, accepted: string): NginxError {
  return new NginxError('SAMMY_NGINX_INVALID_OPTION', `invalid ${flag}: ${JSON.stringify(value)} (accepted: ${accepted})`);
}

/**
 * Characters a path cannot hold in nginx.conf, where every path is written in double
 * quotes: a quote or backslash would end or escape the string, `$` starts a variable
 * in `alias`, `root` and `ssl_certificate`, and control characters end the line.
 */
const UNSAFE_IN_CONFIG = /["\\$\u0000-\u001f\u007f]/;
export const SAFE_PATH_ACCEPTED = 'a path without ", \\, $ or control characters (nginx.conf could not hold them)';

function integerIn(flag: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw invalidNginxOption(flag, value, `an integer from ${min} to ${max}`);
  }
  return value;
}

function onOff(flag: string, value: unknown): boolean {
  if (typeof value !== 'boolean') throw invalidNginxOption(flag, value, 'on, off');
  return value;
}

/** An absolute path nginx.conf can hold. */
function configPath(flag: string, value: unknown, what: string): string {
  if (typeof value !== 'string' || value.length === 0 || UNSAFE_IN_CONFIG.test(value)) {
    throw invalidNginxOption(flag, value, `${what}: ${SAFE_PATH_ACCEPTED}`);
  }
  return resolve(value);
}

function directory(flag: string, value: unknown): string {
  const path = configPath(flag, value, 'a directory');
  let isDirectory = false;
  try {
    isDirectory = statSync(path).isDirectory();
  } catch {
    // reported below with the flag
  }
  if (!isDirectory) throw invalidNginxOption(flag, value, 'an existing directory');
  return path;
}

function host(value: unknown): string {
  // nginx's `listen` takes an address or a name it resolves once at start; nothing else goes into the config.
  if (typeof value !== 'string' || (isIP(value) === 0 && !/^[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$/.test(value))) {
    throw invalidNginxOption('--host', value, 'an IPv4 or IPv6 address (0.0.0.0 or :: for every address) or a host name');
  }
  return value;
}

/** The flags of the Node server's option names, for the checks borrowed from it. */
const FLAG_OF_SERVER_OPTION: Record<string, string> = {
  corsOrigin: '--cors-origin',
  'tls.certFile': '--tls-cert',
  'tls.keyFile': '--tls-key',
};

/** Runs one of the Node server's option checks, its refusal reworded with this command's flag and code. */
function serverCheck<T>(check: () => T): T {
  try {
    return check();
  } catch (err) {
    const { code, option, message } = err as { code?: string; option?: string | null; message: string };
    if (code !== 'SAMMY_SERVER_INVALID_OPTION' || option === null || option === undefined) throw err;
    const flag = FLAG_OF_SERVER_OPTION[option] ?? option;
    throw new NginxError('SAMMY_NGINX_INVALID_OPTION', message.replace(`invalid ${option}:`, `invalid ${flag}:`));
  }
}

function tls(value: unknown): TlsFiles | null {
  if (value === null || value === undefined) return null;
  const files = value as Partial<TlsFiles>;
  configPath('--tls-cert', files.certFile, 'a PEM certificate file (given with --tls-key)');
  configPath('--tls-key', files.keyFile, 'a PEM private key file (given with --tls-cert)');
  // Readable, PEM, and a pair, as the Node server checks them (nginx -t would say it less clearly).
  return serverCheck(() => checkTlsFiles(value));
}

/** Validates every option before anything is written or started, filling defaults. */
export function resolveNginxOptions(input: NginxServerOptionsInput): NginxServerOptions {
  const o = { ...DEFAULT_NGINX_OPTIONS, ...input };
  const minRateKbps = integerIn('--min-rate-kbps', o.minRateKbps, 1, MAX_RATE_KBPS);
  const maxRateKbps = integerIn('--max-rate-kbps', o.maxRateKbps, 1, MAX_RATE_KBPS);
  if (maxRateKbps < minRateKbps) throw invalidNginxOption('--max-rate-kbps', maxRateKbps, `at least --min-rate-kbps (${minRateKbps})`);
  const m = o.spiralGuardMultiplier;
  if (typeof m !== 'number' || !Number.isFinite(m) || m < 1 || m > 100) {
    throw invalidNginxOption('--spiral-guard-multiplier', m, 'a number from 1 to 100');
  }
  const tlsFiles = tls(o.tls);
  const http2 = onOff('--http2', o.http2);
  if (http2 && tlsFiles === null) {
    throw invalidNginxOption('--http2', 'on', 'on only with --tls-cert and --tls-key (browsers speak HTTP/2 over TLS only)');
  }
  return {
    mediaDir: directory('--media', input.mediaDir),
    // Need not exist yet: / says how to build the page until it does.
    playerDir: configPath('--player', o.playerDir, 'a directory'),
    host: host(o.host),
    port: integerIn('--port', o.port, 0, 65535),
    workers: integerIn('--workers', o.workers, 1, MAX_WORKERS),
    pacing: onOff('--pacing', o.pacing),
    spiralGuard: onOff('--spiral-guard', o.spiralGuard),
    spiralGuardMultiplier: m,
    minRateKbps,
    maxRateKbps,
    honourQueryCmcd: onOff('--query-cmcd', o.honourQueryCmcd),
    tailHold: onOff('--tail-hold', o.tailHold),
    logFile: o.logFile === null ? null : configPath('--log', o.logFile, 'a file'),
    tls: tlsFiles,
    http2,
    corsOrigin: serverCheck(() => checkCorsOrigin(o.corsOrigin)),
  };
}
