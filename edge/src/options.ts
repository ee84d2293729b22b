// The edge's options, typed and defaulted in one place. The rate bounds and the
// spiral guard default to the Node server's, so a player is paced alike behind the
// edge and without it; they are checked here with the same ranges the plugin checks
// again (native/core/options.c).
import { DEFAULT_SERVER_OPTIONS } from '@sammy/server/options';

export interface EdgeOptions {
  /** The origin the edge caches in front of: `http://HOST:PORT`, optionally with a path prefix. */
  originUrl: string;
  host: string;
  port: number;
  /** Requested rates are clamped to [minRateKbps, maxRateKbps]. */
  minRateKbps: number;
  maxRateKbps: number;
  /** Read `?CMCD=` when a request has no CMCD header (the header form always counts). */
  honourQueryCmcd: boolean;
  /** Never pace below spiralGuardMultiplier x the request's CMCD `tb` (else `br`), as the Node server (its --spiral-guard). */
  spiralGuard: boolean;
  spiralGuardMultiplier: number;
  /** The telemetry lines (one per response) are written here; null keeps them in the temporary folder only. */
  logFile: string | null;
  /** The disk cache, a sparse file in the temporary folder. */
  cacheSizeMb: number;
}

export type EdgeOptionsInput = Partial<EdgeOptions> & { originUrl: string };

export const DEFAULT_EDGE_OPTIONS: Omit<EdgeOptions, 'originUrl'> = {
  host: '127.0.0.1',
  // Beside a Node server on its default 8080.
  port: 8081,
  minRateKbps: DEFAULT_SERVER_OPTIONS.minRateKbps,
  maxRateKbps: DEFAULT_SERVER_OPTIONS.maxRateKbps,
  honourQueryCmcd: true,
  spiralGuard: DEFAULT_SERVER_OPTIONS.spiralGuard,
  spiralGuardMultiplier: DEFAULT_SERVER_OPTIONS.spiralGuardMultiplier,
  logFile: null,
  cacheSizeMb: 256,
};

/** The plugin refuses rates above this (2^53 bit/s in kbps: every derived byte rate stays exact). */
export const MAX_RATE_KBPS = 1e12;
/** The smallest disk cache tried here (Traffic Server 9.2 starts with it, and serves hits from it). */
const MIN_CACHE_MB = 16;

export class EdgeError extends Error {
  constructor(
    readonly code: 'SAMMY_EDGE_INVALID_OPTION' | 'SAMMY_EDGE_BAD_ARGS' | 'SAMMY_EDGE_UNAVAILABLE' | 'SAMMY_EDGE_FAILED',
    message: string,
  ) {
    super(message);
    this.name = 'EdgeError';
  }
}

/** A bad option: names the option as the user typed it, the value and what is accepted. */
export function invalidEdgeOption(flag: string, value: unknown, accepted: string): EdgeError {
  return new EdgeError('SAMMY_EDGE_INVALID_OPTION', `invalid ${flag}: ${JSON.stringify(value)} (accepted: ${accepted})`);
}

function integerIn(flag: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw invalidEdgeOption(flag, value, `an integer from ${min} to ${max}`);
  }
  return value;
}

function origin(value: unknown): string {
  const accepted = 'an http:// URL such as http://127.0.0.1:8080 (Traffic Server fetches from the origin in plain HTTP)';
  let url: URL;
  try {
    url = new URL(String(value));
  } catch {
    throw invalidEdgeOption('--origin', value, accepted);
  }
  if (url.protocol !== 'http:' || url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    throw invalidEdgeOption('--origin', value, accepted);
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

function host(value: unknown): string {
  // It goes into records.config as one word: an address, not a name to resolve.
  if (typeof value !== 'string' || !/^(?:\d{1,3}(?:\.\d{1,3}){3}|[0-9a-fA-F:]*:[0-9a-fA-F:.]*)$/.test(value)) {
    throw invalidEdgeOption('--host', value, 'an IPv4 or IPv6 address (0.0.0.0 or :: for every address)');
  }
  return value;
}

/** Validates every option before anything is written or started, filling defaults. */
export function resolveEdgeOptions(input: EdgeOptionsInput): EdgeOptions {
  const o = { ...DEFAULT_EDGE_OPTIONS, ...input };
  const minRateKbps = integerIn('--min-rate-kbps', o.minRateKbps, 1, MAX_RATE_KBPS);
  const maxRateKbps = integerIn('--max-rate-kbps', o.maxRateKbps, 1, MAX_RATE_KBPS);
  if (maxRateKbps < minRateKbps) throw invalidEdgeOption('--max-rate-kbps', maxRateKbps, `at least --min-rate-kbps (${minRateKbps})`);
  if (typeof o.honourQueryCmcd !== 'boolean') throw invalidEdgeOption('--query-cmcd', o.honourQueryCmcd, 'on, off');
  if (typeof o.spiralGuard !== 'boolean') throw invalidEdgeOption('--spiral-guard', o.spiralGuard, 'on, off');
  const m = o.spiralGuardMultiplier;
  if (typeof m !== 'number' || !Number.isFinite(m) || m < 1 || m > 100) throw invalidEdgeOption('--spiral-guard-multiplier', m, 'a number from 1 to 100');
  if (o.logFile !== null && (typeof o.logFile !== 'string' || o.logFile.length === 0)) throw invalidEdgeOption('--log', o.logFile, 'a file path');
  return {
    originUrl: origin(input.originUrl),
    host: host(o.host),
    port: integerIn('--port', o.port, 0, 65535),
    minRateKbps,
    maxRateKbps,
    honourQueryCmcd: o.honourQueryCmcd,
    spiralGuard: o.spiralGuard,
    spiralGuardMultiplier: m,
    logFile: o.logFile,
    cacheSizeMb: integerIn('--cache-mb', o.cacheSizeMb, MIN_CACHE_MB, 1024 * 1024),
  };
}
