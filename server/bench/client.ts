// The bench's client, run inside the client namespace:
//   node --import tsx bench/client.ts '<json ClientJob>'
// prints one JSON line with what it measured.
import http from 'node:http';
import type { ClientHttp2Session } from 'node:http2';
import https from 'node:https';
import type { TLSSocket } from 'node:tls';
import { connectH2 } from './h2-session.js';
import { median } from './kit.js';

export type ClientJob =
  | {
      kind: 'get';
      url: string;
      headers: Record<string, string>;
      /** The rate is measured from the moment this many bytes have arrived. */
      markBytes: number;
    }
  | LoadJob
  | H2LoadJob;

export interface LoadJob {
  kind: 'load';
  urls: string[];
  headers: Record<string, string>;
  /** Concurrent keep-alive connections, each fetching the URLs in turn. */
  connections: number;
  /** Stop once this many body bytes have arrived (or after maxS). */
  targetBytes: number;
  maxS: number;
}

/**
 * The `load` over HTTP/2 (https URLs of one origin): `connections` sessions, each with
 * `streamsPerConnection` streams open at once, each stream fetching the URLs in turn.
 */
export type H2LoadJob = Omit<LoadJob, 'kind'> & { kind: 'h2'; streamsPerConnection: number };

export interface GetResult {
  status: number;
  bytes: number;
  rateAfterMarkBytesPerS: number;
  localPort: number;
  /** From the request to its response's head. */
  headMs: number;
}

export interface LoadResult {
  bytes: number;
  requests: number;
  elapsedS: number;
  /**
   * Medians over the requests: from a request to its response's head, and to its last byte
   * (16 clients at 2 MB/s each should take 500 ms for a 1 MB response).
   */
  medianHeadMs?: number;
  medianResponseMs?: number;
  /** For https URLs: what the first connection negotiated (alpn: null when none was, as node:https offers none). */
  tls?: { protocol: string | null; cipher: string; alpn: string | null };
}

const tlsOf = (socket: TLSSocket): NonNullable<LoadResult['tls']> => ({
  protocol: socket.getProtocol(),
  cipher: socket.getCipher().name,
  alpn: socket.alpnProtocol === false ? null : (socket.alpnProtocol ?? null),
});

/** https URLs go over TLS, trusting any certificate (the bench's is self-signed for the run). */
const clientFor = (url: string): typeof http | typeof https => (url.startsWith('https:') ? https : http);

function get(url: string, headers: Record<string, string>, agent: http.Agent | false, markBytes: number, onSocket?: (res: http.IncomingMessage) => void): Promise<GetResult> {
  return new Promise((resolve, reject) => {
    const startMs = performance.now();
    clientFor(url)
      .get(url, { headers, agent, rejectUnauthorized: false }, (res) => {
        const headMs = performance.now() - startMs;
        onSocket?.(res);
        let bytes = 0;
        let markMs: number | null = null;
        let bytesAtMark = 0;
        const localPort = res.socket.localPort ?? -1;
        res.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          if (markMs === null && bytes >= markBytes) {
            markMs = performance.now();
            // A paced body arrives in trains, each leaving the previous train's length at the rate
            // after it (the last one, a server's held-back byte, one train after the one before).
            // From the train that crosses the mark to the end, the bytes to count are that train's
            // and every later one's: leaving that train out counted one train's time without its
            // bytes (0.95 at 1 Mbit/s, where the kernel's trains on a veth pair are 13 KB).
            bytesAtMark = bytes - chunk.length;
          }
        });
        res.on('end', () => {
          const spanS = markMs === null ? 0 : (performance.now() - markMs) / 1000;
          resolve({
            status: res.statusCode ?? 0,
            bytes,
            rateAfterMarkBytesPerS: spanS > 0 ? (bytes - bytesAtMark) / spanS : 0,
            localPort,
            headMs,
          });
        });
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

/** What a load's clients have fetched so far. */
interface Tally {
  bytes: number;
  requests: number;
  headMs: number[];
  responseMs: number[];
}

const newTally = (): Tally => ({ bytes: 0, requests: 0, headMs: [], responseMs: [] });

function loadResult(tally: Tally, startMs: number, tls: LoadResult['tls']): LoadResult {
  return {
    bytes: tally.bytes,
    requests: tally.requests,
    elapsedS: (performance.now() - startMs) / 1000,
    medianHeadMs: median(tally.headMs),
    medianResponseMs: median(tally.responseMs),
    ...(tls && { tls }),
  };
}

/** Fetches the URLs in turn from index `first` until the job's bytes are in or its time is up. */
async function fetchInTurn(
  job: { urls: string[]; targetBytes: number },
  deadlineMs: number,
  first: number,
  tally: Tally,
  fetchOne: (url: string) => Promise<{ status: number; bytes: number; headMs: number }>,
): Promise<void> {
  for (let i = first; tally.bytes < job.targetBytes && performance.now() < deadlineMs; i++) {
    const startMs = performance.now();
    const r = await fetchOne(job.urls[i % job.urls.length]!);
    if (r.status !== 200) throw new Error(`status ${r.status}`);
    tally.bytes += r.bytes;
    tally.requests += 1;
    tally.headMs.push(r.headMs);
    tally.responseMs.push(performance.now() - startMs);
  }
}

async function load(job: LoadJob): Promise<LoadResult> {
  const startMs = performance.now();
  const tally = newTally();
  let tls: LoadResult['tls'];
  const noteTls = (res: http.IncomingMessage): void => {
    const socket = res.socket as TLSSocket;
    if (tls === undefined && typeof socket.getCipher === 'function') tls = tlsOf(socket);
  };
  const worker = async (index: number): Promise<void> => {
    const agent = new (clientFor(job.urls[0]!).Agent)({ keepAlive: true, maxSockets: 1 });
    await fetchInTurn(job, startMs + job.maxS * 1000, index, tally, (url) => get(url, job.headers, agent, Infinity, noteTls));
    agent.destroy();
  };
  await Promise.all(Array.from({ length: job.connections }, (_, i) => worker(i)));
  return loadResult(tally, startMs, tls);
}

/** One GET on an HTTP/2 session: its status and body bytes. */
function h2Get(session: ClientHttp2Session, url: string, headers: Record<string, string>): Promise<{ status: number; bytes: number; headMs: number }> {
  return new Promise((resolve, reject) => {
    const startMs = performance.now();
    const u = new URL(url);
    // HTTP/2 field names are lowercase.
    const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
    const stream = session.request({ ':path': u.pathname + u.search, ...lower });
    let status = 0;
    let bytes = 0;
    let headMs = NaN;
    stream.on('response', (h) => {
      status = Number(h[':status']);
      headMs = performance.now() - startMs;
    });
    stream.on('data', (chunk: Buffer) => (bytes += chunk.length));
    stream.on('end', () => resolve({ status, bytes, headMs }));
    stream.on('error', reject);
    stream.end();
  });
}

async function h2Load(job: H2LoadJob): Promise<LoadResult> {
  const startMs = performance.now();
  const tally = newTally();
  let tls: LoadResult['tls'];
  const connection = async (c: number): Promise<void> => {
    // The bench's certificate is self-signed for the run.
    const session = await connectH2(new URL(job.urls[0]!).origin, { rejectUnauthorized: false });
    // A session that did not get h2 by ALPN fails to connect: alpn says h2 here.
    tls ??= tlsOf(session.socket as TLSSocket);
    const stream = (s: number): Promise<void> => fetchInTurn(job, startMs + job.maxS * 1000, c * job.streamsPerConnection + s, tally, (url) => h2Get(session, url, job.headers));
    await Promise.all(Array.from({ length: job.streamsPerConnection }, (_, s) => stream(s)));
    session.close();
  };
  await Promise.all(Array.from({ length: job.connections }, (_, c) => connection(c)));
  return loadResult(tally, startMs, tls);
}

const job = JSON.parse(process.argv[2] ?? '{}') as ClientJob;
const result = job.kind === 'get' ? await get(job.url, job.headers, false, job.markBytes) : job.kind === 'h2' ? await h2Load(job) : await load(job);
process.stdout.write(`${JSON.stringify(result)}\n`);
