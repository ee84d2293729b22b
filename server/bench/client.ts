// The bench's client, run inside the client namespace:
//   node --import tsx bench/client.ts '<json ClientJob>'
// prints one JSON line with what it measured.
import http from 'node:http';
import https from 'node:https';
import type { TLSSocket } from 'node:tls';

export type ClientJob =
  | {
      kind: 'get';
      url: string;
      headers: Record<string, string>;
      /** The rate is measured from the moment this many bytes have arrived. */
      markBytes: number;
    }
  | {
      kind: 'load';
      urls: string[];
      headers: Record<string, string>;
      /** Concurrent keep-alive connections, each fetching the URLs in turn. */
      connections: number;
      /** Stop once this many body bytes have arrived (or after maxS). */
      targetBytes: number;
      maxS: number;
    };

export interface GetResult {
  status: number;
  bytes: number;
  rateAfterMarkBytesPerS: number;
  localPort: number;
}

export interface LoadResult {
  bytes: number;
  requests: number;
  elapsedS: number;
  /** For https URLs: what the first connection negotiated. */
  tls?: { protocol: string | null; cipher: string };
}

/** https URLs go over TLS, trusting any certificate (the bench's is self-signed for the run). */
const clientFor = (url: string): typeof http | typeof https => (url.startsWith('https:') ? https : http);

function get(url: string, headers: Record<string, string>, agent: http.Agent | false, markBytes: number, onSocket?: (res: http.IncomingMessage) => void): Promise<GetResult> {
  return new Promise((resolve, reject) => {
    clientFor(url)
      .get(url, { headers, agent, rejectUnauthorized: false }, (res) => {
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
          });
        });
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

async function load(job: Extract<ClientJob, { kind: 'load' }>): Promise<LoadResult> {
  const startMs = performance.now();
  const deadlineMs = startMs + job.maxS * 1000;
  let bytes = 0;
  let requests = 0;
  let tls: LoadResult['tls'];
  const noteTls = (res: http.IncomingMessage): void => {
    const socket = res.socket as TLSSocket;
    if (tls === undefined && typeof socket.getCipher === 'function') tls = { protocol: socket.getProtocol(), cipher: socket.getCipher().name };
  };
  const worker = async (index: number): Promise<void> => {
    const agent = new (clientFor(job.urls[0]!).Agent)({ keepAlive: true, maxSockets: 1 });
    let i = index;
    while (bytes < job.targetBytes && performance.now() < deadlineMs) {
      const r = await get(job.urls[i % job.urls.length]!, job.headers, agent, Infinity, noteTls);
      if (r.status !== 200) throw new Error(`status ${r.status}`);
      bytes += r.bytes;
      requests += 1;
      i += 1;
    }
    agent.destroy();
  };
  await Promise.all(Array.from({ length: job.connections }, (_, i) => worker(i)));
  return { bytes, requests, elapsedS: (performance.now() - startMs) / 1000, ...(tls && { tls }) };
}

const job = JSON.parse(process.argv[2] ?? '{}') as ClientJob;
const result = job.kind === 'get' ? await get(job.url, job.headers, false, job.markBytes) : await load(job);
process.stdout.write(`${JSON.stringify(result)}\n`);
