// Real sockets on 127.0.0.1, port 0: servers built with buildApp() and listening,
// clients that time what they receive, and raw connections for hostile input.
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import http2, { type ClientHttp2Session, type ClientHttp2Stream, type IncomingHttpHeaders } from 'node:http2';
import https from 'node:https';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { connectH2 } from '../bench/h2-session.js';
import { Http1Connection, type Http1Response } from '../bench/http1.js';
import { buildApp, type AppDependencies } from '../src/app.js';
import type { BodyPathOption, ServerOptionsInput } from '../src/options.js';
import type { ResponseTelemetry } from '../src/telemetry.js';

export const MB = 1_000_000;

/** A temporary folder holding the given files (relative path -> content). */
export function makeDir(files: Record<string, Buffer | string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'sammy-server-test-'));
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), content);
  }
  return dir;
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

export function randomFile(bytes: number): Buffer {
  return randomBytes(bytes);
}

/** Collects the server's JSON log lines. */
export class LogCapture {
  readonly lines: Array<Record<string, unknown>> = [];

  write(line: string): void {
    this.lines.push(JSON.parse(line) as Record<string, unknown>);
  }

  media(): ResponseTelemetry[] {
    return this.lines.filter((l) => l['msg'] === 'media response') as unknown as ResponseTelemetry[];
  }

  /** Resolves with the first media response line matching, waiting up to timeoutMs. */
  waitForMedia(match: (t: ResponseTelemetry) => boolean, timeoutMs = 5000): Promise<ResponseTelemetry> {
    return waitFor(() => this.media().find(match) ?? null, timeoutMs);
  }

  /**
   * The line of the response `res` received: same client port, written after the
   * request started (a port the kernel handed out again may have an older line).
   */
  waitForResponse(exchange: ClientExchange, match: (t: ResponseTelemetry) => boolean = () => true, timeoutMs = 5000): Promise<ResponseTelemetry> {
    return this.waitForMedia((t) => isOf(t, exchange) && match(t), timeoutMs);
  }

  /** Every media response line of one client connection so far (see waitForResponse). */
  mediaOf(exchange: ClientExchange): ResponseTelemetry[] {
    return this.media().filter((t) => isOf(t, exchange));
  }
}

/** A client connection as the server's log lines name it. */
export interface ClientExchange {
  localPort: number;
  /** Date.now() before the connection was opened. */
  startedAtEpochMs: number;
}

function isOf(t: ResponseTelemetry, exchange: ClientExchange): boolean {
  return t.remotePort === exchange.localPort && t.time >= exchange.startedAtEpochMs;
}

/** Polls `probe` (which may answer later: a request) until it returns something other than null. */
export async function waitFor<T>(probe: () => T | null | PromiseLike<T | null>, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await probe();
    if (found !== null) return found;
    if (Date.now() > deadline) throw new Error(`nothing matched within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export interface RunningServer {
  app: FastifyInstance;
  port: number;
  logs: LogCapture;
  close(): Promise<void>;
}

/**
 * The body path the suite runs on unless a test names one: `npm test` runs the I/O
 * suites twice (jest.config.js), once as configured by default (sendfile where it
 * works) and once with SAMMY_TEST_BODY_PATH=stream.
 */
export const TEST_BODY_PATH = (process.env['SAMMY_TEST_BODY_PATH'] ?? 'auto') as BodyPathOption;

export async function startServer(input: ServerOptionsInput, deps: AppDependencies = {}): Promise<RunningServer> {
  const logs = new LogCapture();
  const app = await buildApp({ logLevel: 'info', bodyPath: TEST_BODY_PATH, ...input }, { logStream: logs, ...deps });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address() as net.AddressInfo;
  return { app, port: address.port, logs, close: () => app.close() };
}

/**
 * Writes `heads` on one new connection in one write (pipelined), waits for every
 * response, then for the server's telemetry line of each (by the client's port).
 */
export async function pipelinedExchange(server: RunningServer, heads: string[], o: { tls?: boolean } = {}): Promise<{ responses: Http1Response[]; lines: ResponseTelemetry[] }> {
  const startedAtEpochMs = Date.now();
  const conn = await Http1Connection.open('127.0.0.1', server.port, o);
  try {
    const responses = await Promise.all(conn.send(heads));
    const exchange = { localPort: conn.socket.localPort!, startedAtEpochMs };
    const lines = await waitFor(() => {
      const mine = server.logs.mediaOf(exchange);
      return mine.length === heads.length ? mine : null;
    });
    return { responses, lines };
  } finally {
    conn.close();
  }
}

export interface TimedResponse extends ClientExchange {
  status: number;
  headers: http.IncomingHttpHeaders;
  bytes: number;
  body: Buffer | null;
  elapsedMs: number;
  /** Bytes per second from the moment `markBytes` had arrived to the last byte. */
  rateAfterMarkBytesPerS: number;
}

export interface GetOptions {
  headers?: Record<string, string>;
  agent?: http.Agent;
  /** HTTPS, trusting this certificate (a test's self-signed one). */
  ca?: Buffer;
  /** Rate is measured beyond this many bytes (past TCP's unpaced initial window). */
  markBytes?: number;
  keepBody?: boolean;
  method?: string;
  /** Fail the request when it has not ended by then (default: wait as long as it takes). */
  timeoutMs?: number;
}

/** GET with a timeline of arrival, for rates measured by the receiver. */
export function timedGet(port: number, path: string, o: GetOptions = {}): Promise<TimedResponse> {
  const markBytes = o.markBytes ?? MB;
  return new Promise((resolve, reject) => {
    const startMs = performance.now();
    const startedAtEpochMs = Date.now();
    const request = o.ca === undefined ? http.request : https.request;
    const req = request(
      { host: '127.0.0.1', port, path, method: o.method ?? 'GET', headers: o.headers ?? {}, agent: o.agent ?? false, ...(o.ca && { ca: o.ca }) },
      (res) => {
        let bytes = 0;
        let markMs: number | null = null;
        let bytesAtMark = 0;
        const chunks: Buffer[] = [];
        const localPort = res.socket.localPort ?? -1;
        res.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          if (o.keepBody) chunks.push(chunk);
          if (markMs === null && bytes >= markBytes) {
            markMs = performance.now();
            bytesAtMark = bytes;
          }
        });
        res.on('end', () => {
          const endMs = performance.now();
          const spanS = markMs === null ? 0 : (endMs - markMs) / 1000;
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            bytes,
            body: o.keepBody ? Buffer.concat(chunks) : null,
            elapsedMs: endMs - startMs,
            localPort,
            startedAtEpochMs,
            rateAfterMarkBytesPerS: spanS > 0 ? (bytes - bytesAtMark) / spanS : Infinity,
          });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (o.timeoutMs !== undefined) {
      const timer = setTimeout(() => req.destroy(new Error(`GET ${path}: no answer within ${o.timeoutMs} ms`)), o.timeoutMs);
      req.on('close', () => clearTimeout(timer));
    }
    req.end();
  });
}

export interface RawResult {
  /** Status code of the first response, or null if the server answered nothing. */
  status: number | null;
  text: string;
  /** The server closed the connection. */
  closed: boolean;
  elapsedMs: number;
}

/**
 * Writes bytes to a fresh connection exactly as given (no client-side checks or
 * normalisation) and collects what comes back until the server closes or
 * `waitMs` passes.
 */
export function rawExchange(port: number, request: string | Buffer, waitMs = 2000): Promise<RawResult> {
  return new Promise((resolve) => {
    const startMs = performance.now();
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let closed = false;
    const done = (): void => {
      clearTimeout(timer);
      socket.destroy();
      const text = Buffer.concat(chunks).toString('latin1');
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      resolve({ status: m ? Number(m[1]) : null, text, closed, elapsedMs: performance.now() - startMs });
    };
    const timer = setTimeout(done, waitMs);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('end', () => {
      closed = true;
      done();
    });
    socket.on('error', () => {
      closed = true;
      done();
    });
    socket.write(request);
  });
}

/** A plain GET request's head (HTTP/1.1, closes after the response). */
export function requestHead(path: string, extraHeaders = ''): string {
  return `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n${extraHeaders}\r\n`;
}

export { makeSelfSignedCert, opensslMissing, type SelfSignedCert } from '../bench/certificate.js';

/**
 * HTTP/2 clients (node:http2) for the servers' --http2 tests, the Node server's and
 * nginx's, with a browser's windows (bench/h2-session.ts).
 */
/** HTTP/2 rates are measured past this many bytes of a stream (its start shares the connection's unpaced first segments). */
export const H2_MARK_BYTES = MB;

/** One HTTP/2 connection over TLS to 127.0.0.1, trusting `ca`; a browser's windows unless `browserWindows: false`. */
export function openH2Session(port: number, ca: Buffer, o: { browserWindows?: boolean } = {}): Promise<ClientHttp2Session> {
  return connectH2(`https://127.0.0.1:${port}`, { ca }, o.browserWindows ?? true);
}

export interface H2StreamResult {
  status: number;
  headers: IncomingHttpHeaders;
  streamId: number;
  bytes: number;
  startMs: number;
  endMs: number;
  /** Bytes per second from H2_MARK_BYTES to the end. */
  rateAfterMarkBytesPerS: number;
  /** When this stream's byte count passed `atBytes` (for rates over a part of it). */
  at: (atBytes: number) => number;
}

/** One GET on the session; `onData` sees the running byte count (and may reset the stream). */
export function h2Get(session: ClientHttp2Session, path: string, headers: Record<string, string> = {}, onData?: (bytes: number, stream: ClientHttp2Stream) => void): Promise<H2StreamResult> {
  return new Promise((resolve, reject) => {
    const startMs = performance.now();
    const stream = session.request({ ':path': path, ...headers });
    let responseHeaders: IncomingHttpHeaders = {};
    let bytes = 0;
    const marks: Array<[number, number]> = [];
    stream.on('response', (h) => (responseHeaders = h));
    stream.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      marks.push([bytes, performance.now()]);
      onData?.(bytes, stream);
    });
    const at = (atBytes: number): number => marks.find(([b]) => b >= atBytes)?.[1] ?? Infinity;
    const done = (): void => {
      const endMs = performance.now();
      const markMs = at(H2_MARK_BYTES);
      resolve({
        status: Number(responseHeaders[':status']),
        headers: responseHeaders,
        streamId: stream.id!,
        bytes,
        startMs,
        endMs,
        rateAfterMarkBytesPerS: markMs < endMs ? (bytes - marks.find(([b]) => b >= H2_MARK_BYTES)![0]) / ((endMs - markMs) / 1000) : Infinity,
        at,
      });
    };
    stream.on('end', done);
    // A stream the client resets itself ends here.
    stream.on('close', () => {
      if (stream.rstCode !== http2.constants.NGHTTP2_NO_ERROR) done();
    });
    stream.on('error', reject);
    stream.end();
  });
}

/** A small HTTP/2 response's body as text. */
export function h2Text(session: ClientHttp2Session, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':path': path });
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => resolve(Buffer.concat(chunks).toString()));
    stream.on('error', reject);
    stream.end();
  });
}

/** The session's local port: the remotePort of its streams' telemetry lines. */
export function h2LocalPort(session: ClientHttp2Session): number {
  return (session.socket as { localPort?: number }).localPort ?? -1;
}

/** CMCD asking for `kbps` (CMCD-Status: rtp=...). */
export const h2Rtp = (kbps: number): Record<string, string> => ({ 'cmcd-status': `rtp=${kbps}` });

/** Malformed CMCD a server ignores (served unpaced, counted), with what its line's cmcdProblem says. */
export const H2_MALFORMED_CMCD_CASES: [string, RegExp][] = [
  ['rtp=abc', /rtp/],
  ['rtp=-1', /rtp/],
  ['v=3,rtp=5000', /version 3/],
];

/** Streams measured together: their rate past the mark, together and each while all of them still sent. */
export interface H2Together {
  streams: H2StreamResult[];
  /** All the bytes past the mark over the time from the last mark to the last end. */
  togetherBytesPerS: number;
  /** Each stream's bytes past its mark until the first of them ended. */
  whileAllBytesPerS: number[];
}

/** GETs of `path` with these rates (kbps) at once on one session. */
export async function h2Together(session: ClientHttp2Session, path: string, rtpKbps: number[]): Promise<H2Together> {
  const streams = await Promise.all(rtpKbps.map((kbps) => h2Get(session, path, h2Rtp(kbps))));
  const pastMarkBytes = streams.reduce((sum, r) => sum + r.bytes - H2_MARK_BYTES, 0);
  const togetherMs = Math.max(...streams.map((r) => r.endMs)) - Math.max(...streams.map((r) => r.at(H2_MARK_BYTES)));
  const firstEndMs = Math.min(...streams.map((r) => r.endMs));
  const bytesAtFirstEnd = (r: H2StreamResult): number => (r.endMs === firstEndMs ? r.bytes : h2BytesAt(r, firstEndMs));
  const whileAllBytesPerS = streams.map((r) => (bytesAtFirstEnd(r) - H2_MARK_BYTES) / ((firstEndMs - r.at(H2_MARK_BYTES)) / 1000));
  return { streams, togetherBytesPerS: pastMarkBytes / (togetherMs / 1000), whileAllBytesPerS };
}

/** Two streams at `rtpKbps` at once: the first (`cutPath`) is reset once it has H2_MARK_BYTES, the other (`survivorPath`) runs to its end. */
export async function h2ResetOneOfTwo(session: ClientHttp2Session, cutPath: string, survivorPath: string, rtpKbps: number): Promise<{ cut: H2StreamResult; survivor: H2StreamResult }> {
  const [cut, survivor] = await Promise.all([
    h2Get(session, cutPath, h2Rtp(rtpKbps), (bytes, stream) => {
      if (bytes >= H2_MARK_BYTES && !stream.destroyed) stream.close(http2.constants.NGHTTP2_CANCEL);
    }),
    h2Get(session, survivorPath, h2Rtp(rtpKbps)),
  ]);
  return { cut, survivor };
}

/** Opens `count` streams and resets each at once (RST_STREAM CANCEL), as a player that gives up many requests. */
export function h2CancelMany(session: ClientHttp2Session, path: string, headers: Record<string, string>, count: number): void {
  for (let i = 0; i < count; i++) {
    const stream = session.request({ ':path': path, ...headers });
    stream.on('error', () => undefined);
    stream.close(http2.constants.NGHTTP2_CANCEL);
  }
}

/** GETs of `path`, one per header set, that the client never reads (a player that hangs): the server fills the windows and waits. */
export function h2RequestsNeverRead(session: ClientHttp2Session, path: string, headerSets: Record<string, string>[]): ClientHttp2Stream[] {
  return headerSets.map((headers) => {
    const stream = session.request({ ':path': path, ...headers });
    stream.pause();
    stream.on('error', () => undefined);
    stream.end();
    return stream;
  });
}

/** Bytes an HTTP/2 stream had received by `atMs`. */
export function h2BytesAt(r: H2StreamResult, atMs: number): number {
  let lo = 0;
  let hi = r.bytes;
  // r.at is monotonic in bytes: binary search for the last count reached by atMs.
  while (hi - lo > 16 * 1024) {
    const mid = Math.floor((lo + hi) / 2);
    if (r.at(mid) <= atMs) lo = mid;
    else hi = mid;
  }
  return lo;
}

/** Open file descriptors of this process (Linux; null elsewhere). */
export function openFds(): number | null {
  try {
    return readdirSync('/proc/self/fd').length;
  } catch {
    return null;
  }
}

/** Active handles and requests of this process by type (timers, sockets...). */
export function activeResources(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const type of process.getActiveResourcesInfo()) counts[type] = (counts[type] ?? 0) + 1;
  return counts;
}

/**
 * Runs a timing measurement up to `attempts` times until `good` holds, and returns
 * the last result for the test to assert on. Rates on a shared 2-core machine dip
 * when other work starves this process; a broken server misses every attempt.
 */
export async function measureUntil<T>(what: string, measure: () => Promise<T>, good: (result: T) => boolean, attempts = 3): Promise<T> {
  let result = await measure();
  for (let attempt = 2; attempt <= attempts && !good(result); attempt++) {
    console.log(`${what}: attempt ${attempt - 1} was off (busy machine?), measuring again`);
    result = await measure();
  }
  return result;
}

export async function sleep(ms: number): Promise<void> {
  await new Promise((r) => setTimeout(r, ms));
}

/** One Prometheus sample's value from /metrics text, e.g. metricValue(text, 'sammy_media_responses_active'). */
export function metricValue(text: string, series: string): number | null {
  for (const line of text.split('\n')) {
    if (line.startsWith(`${series} `)) return Number(line.slice(series.length + 1));
  }
  return null;
}

/**
 * Requests every server's spiral guard must decide alike (docs/server-contract.md):
 * the Node server, the Traffic Server edge and the nginx module run these and compare
 * the `Server-Timing` and the telemetry line.
 */
export const SPIRAL_GUARD_CASES: { name: string; headers: Record<string, string>; serverTiming: string; line: Partial<ResponseTelemetry> }[] = [
  {
    name: "a stock player's rtp below 2.5 x tb is raised to it",
    headers: { 'CMCD-Status': 'rtp=1000', 'CMCD-Object': 'br=1050,tb=1050' },
    serverTiming: 'pace;dur=2625;desc="paced"',
    line: { rtpKbps: 1000, appliedRateKbps: 2625, guardFloorKbps: 2625, guardBasis: 'tb', guardRaised: true },
  },
  {
    name: 'without tb the floor is 2.5 x br',
    headers: { 'CMCD-Status': 'rtp=600', 'CMCD-Object': 'br=300' },
    serverTiming: 'pace;dur=750;desc="paced"',
    line: { rtpKbps: 600, appliedRateKbps: 750, guardFloorKbps: 750, guardBasis: 'br', guardRaised: true },
  },
  {
    name: 'a floor the player declares (sammy-floor) replaces 2.5 x tb: a pace under 2.5 x tb above it is kept',
    headers: { 'CMCD-Status': 'rtp=1200,sammy-floor=1155', 'CMCD-Object': 'br=1050,tb=1050' },
    serverTiming: 'pace;dur=1200;desc="paced"',
    line: { rtpKbps: 1200, appliedRateKbps: 1200, guardFloorKbps: 1155, guardBasis: 'sammy-floor', guardRaised: false },
  },
  {
    name: 'an rtp below the floor the player declares is raised to it',
    headers: { 'CMCD-Status': 'rtp=900,sammy-floor=1155', 'CMCD-Object': 'tb=1050' },
    serverTiming: 'pace;dur=1155;desc="paced"',
    line: { rtpKbps: 900, appliedRateKbps: 1155, guardFloorKbps: 1155, guardBasis: 'sammy-floor', guardRaised: true },
  },
  {
    name: "a request with rtp above 2.5 x tb is kept",
    headers: { 'CMCD-Status': 'rtp=3100', 'CMCD-Object': 'tb=1050' },
    serverTiming: 'pace;dur=3100;desc="paced"',
    line: { rtpKbps: 3100, appliedRateKbps: 3100, guardFloorKbps: 2625, guardBasis: 'tb', guardRaised: false },
  },
];

