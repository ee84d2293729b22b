/**
 * One HTTP GET with the timing the player records (request sent, first byte, last
 * byte), progress while the body arrives, and an abort. node:http over a keep-alive
 * agent per session, as a browser keeps its connections to a host; the local port of
 * the connection is recorded so the server's per-response telemetry (which logs the
 * client's port) can be attributed to the session.
 */
import { request, type Agent } from 'node:http';
import { appliedRateKbps } from '@sammy/player/server-timing';

export interface FetchResult {
  status: number;
  bytes: number;
  /** Body, kept only when asked for (manifest, sidecar). */
  body: Buffer | null;
  requestMs: number;
  firstByteMs: number;
  endMs: number;
  /** From the response's Server-Timing `pace` entry. */
  appliedRateKbps: number | null;
  localPort: number | null;
}

export interface FetchOptions {
  agent: Agent;
  headers: Record<string, string>;
  keepBody?: boolean;
  now: () => number;
  /** Called every `progressMs` while the body arrives with the bytes so far; return true to abort. */
  onProgress?: (loadedBytes: number, sinceFirstByteMs: number) => boolean;
  progressMs?: number;
  timeoutMs?: number;
}

export class FetchError extends Error {
  constructor(
    readonly code: 'HEADLESS_HTTP' | 'HEADLESS_ABORTED',
    message: string,
    /** Bytes received before the abort or failure. */
    readonly loadedBytes = 0,
  ) {
    super(message);
  }
}

export function fetchTimed(url: string, o: FetchOptions): { done: Promise<FetchResult>; abort: () => void } {
  let abort: () => void = () => {};
  const done = new Promise<FetchResult>((resolve, reject) => {
    const requestMs = o.now();
    let firstByteMs = requestMs;
    let bytes = 0;
    let localPort: number | null = null;
    const parts: Buffer[] = [];
    let timer: NodeJS.Timeout | null = null;
    const req = request(url, { agent: o.agent, headers: o.headers, timeout: o.timeoutMs ?? 60_000 });
    const fail = (err: FetchError) => {
      if (timer) clearInterval(timer);
      req.destroy();
      reject(err);
    };
    abort = () => fail(new FetchError('HEADLESS_ABORTED', `aborted ${url}`, bytes));
    req.on('socket', (s) => {
      const note = () => void (localPort = s.localPort ?? localPort);
      if (s.localPort) note();
      else s.once('connect', note);
    });
    req.on('timeout', () => fail(new FetchError('HEADLESS_HTTP', `timed out: ${url}`, bytes)));
    req.on('error', (err) => fail(new FetchError('HEADLESS_HTTP', `${url}: ${err.message}`, bytes)));
    req.on('response', (res) => {
      firstByteMs = o.now();
      const status = res.statusCode ?? 0;
      if (o.onProgress) {
        timer = setInterval(() => {
          if (o.onProgress!(bytes, o.now() - firstByteMs)) abort();
        }, o.progressMs ?? 100);
      }
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (o.keepBody) parts.push(chunk);
      });
      res.on('error', (err) => fail(new FetchError('HEADLESS_HTTP', `${url}: ${err.message}`, bytes)));
      res.on('end', () => {
        if (timer) clearInterval(timer);
        const serverTiming = res.headers['server-timing'];
        const result: FetchResult = {
          status, bytes, body: o.keepBody ? Buffer.concat(parts) : null, requestMs, firstByteMs, endMs: o.now(),
          appliedRateKbps: appliedRateKbps(Array.isArray(serverTiming) ? serverTiming.join(',') : serverTiming), localPort,
        };
        if (status < 200 || status >= 300) reject(new FetchError('HEADLESS_HTTP', `${url}: HTTP ${status}`, bytes));
        else resolve(result);
      });
    });
    req.end();
  });
  return { done, abort: () => abort() };
}
