// The carry-over and pipelining bench's client, run in the client namespace:
//   node --import tsx bench/carryover-client.ts '<json CarryoverJob>'
// prints one JSON line with every response's times.
import { Http1Connection, requestHead, type Http1Response } from './http1.js';

export type CarryoverJob =
  | {
      kind: 'carryover';
      host: string;
      port: number;
      tls: boolean;
      /** The paced response: its path and rtp (kbps). */
      pacedPath: string;
      rtpKbps: number;
      /** Unpaced responses fetched right after a paced one on the same connection, in turn. */
      nextPaths: string[];
      rounds: number;
    }
  | {
      kind: 'fresh';
      host: string;
      port: number;
      tls: boolean;
      paths: string[];
      rounds: number;
    }
  | {
      kind: 'pipeline';
      host: string;
      port: number;
      tls: boolean;
      requests: Array<{ path: string; rtpKbps: number | null }>;
    };

export interface CarryoverSample {
  path: string;
  /** The paced response just before, on the same connection. */
  paced: Http1Response;
  next: Http1Response;
}

export interface CarryoverResult {
  samples: CarryoverSample[];
}

export interface FreshResult {
  samples: Array<{ path: string; response: Http1Response }>;
}

export interface PipelineResult {
  localPort: number;
  responses: Http1Response[];
}

const cmcd = (rtpKbps: number | null): Record<string, string> => (rtpKbps === null ? {} : { 'CMCD-Status': `rtp=${rtpKbps}` });

async function carryover(job: Extract<CarryoverJob, { kind: 'carryover' }>): Promise<CarryoverResult> {
  const conn = await Http1Connection.open(job.host, job.port, { tls: job.tls });
  const samples: CarryoverSample[] = [];
  try {
    for (let round = 0; round < job.rounds; round++) {
      for (const path of job.nextPaths) {
        const paced = await conn.get(requestHead(job.host, job.pacedPath, cmcd(job.rtpKbps)));
        // As a player does: the next request as soon as the last byte is in.
        const next = await conn.get(requestHead(job.host, path));
        samples.push({ path, paced, next });
      }
    }
  } finally {
    conn.close();
  }
  return { samples };
}

/** The same unpaced responses, each on a new connection: what the next response should look like. */
async function fresh(job: Extract<CarryoverJob, { kind: 'fresh' }>): Promise<FreshResult> {
  const samples: FreshResult['samples'] = [];
  for (let round = 0; round < job.rounds; round++) {
    for (const path of job.paths) {
      const conn = await Http1Connection.open(job.host, job.port, { tls: job.tls });
      try {
        samples.push({ path, response: await conn.get(requestHead(job.host, path)) });
      } finally {
        conn.close();
      }
    }
  }
  return { samples };
}

async function pipeline(job: Extract<CarryoverJob, { kind: 'pipeline' }>): Promise<PipelineResult> {
  const conn = await Http1Connection.open(job.host, job.port, { tls: job.tls });
  try {
    const responses = await Promise.all(conn.send(job.requests.map((r) => requestHead(job.host, r.path, cmcd(r.rtpKbps)))));
    return { localPort: conn.socket.localPort!, responses };
  } finally {
    conn.close();
  }
}

const job = JSON.parse(process.argv[2] ?? '{}') as CarryoverJob;
const result = job.kind === 'carryover' ? await carryover(job) : job.kind === 'fresh' ? await fresh(job) : await pipeline(job);
process.stdout.write(`${JSON.stringify(result)}\n`);
