// The connections bench's client, one of several processes in the client namespace:
//   node --import tsx bench/connections-client.ts '<json ConnectionsJob>'
// From `startAtEpochMs` it opens its connections (a few at a time, as browsers
// arriving), and each asks for a paced segment, then the next as soon as the last
// byte is in, until `holdUntilEpochMs`; then it closes them all at once and prints
// one JSON line. What went wrong before the deadline counts as an error.
import { Http1Connection, requestHead } from './http1.js';

export interface ConnectionsJob {
  host: string;
  port: number;
  connections: number;
  path: string;
  /** The file's size: a body of another length is an error. */
  fileBytes: number;
  rtpKbps: number;
  /** Connects in flight at once from this process. */
  connectConcurrency: number;
  startAtEpochMs: number;
  holdUntilEpochMs: number;
  /** Scrape /metrics every second from this process (one of them does) for the server's paced responses in flight. */
  scrapeMetrics: boolean;
}

export interface ConnectionsResult {
  opened: number;
  /** Connections open at once, at most, in this process. */
  peakOpen: number;
  /** Milliseconds after startAtEpochMs when all of this process's connections were open (null if some never opened). */
  allOpenAfterMs: number | null;
  responses: number;
  bodyBytes: number;
  errors: { connect: number; connection: number; status: number; short: number };
  /** The first few error messages, to say what went wrong. */
  errorSamples: string[];
  /**
   * Each whole response's body bits over the time from its request to its last byte (kbit/s):
   * the first on its connection (whose first 10 packets leave unpaced) and the later ones.
   */
  firstResponseKbps: number[];
  laterResponseKbps: number[];
  /** Peak of sammy_media_responses_active over the scrapes every worker answered, or null when not scraping. */
  activeResponsesPeak: number | null;
  scrapes: number;
  /** Scrapes a worker did not answer in time (left out of the peak). */
  partialScrapes: number;
}

const job = JSON.parse(process.argv[2] ?? '{}') as ConnectionsJob;
const result: ConnectionsResult = {
  opened: 0,
  peakOpen: 0,
  allOpenAfterMs: null,
  responses: 0,
  bodyBytes: 0,
  errors: { connect: 0, connection: 0, status: 0, short: 0 },
  errorSamples: [],
  firstResponseKbps: [],
  laterResponseKbps: [],
  activeResponsesPeak: null,
  scrapes: 0,
  partialScrapes: 0,
};
const open = new Set<Http1Connection>();
const beforeDeadline = (): boolean => Date.now() < job.holdUntilEpochMs;
const noteError = (kind: keyof ConnectionsResult['errors'], message: string): void => {
  result.errors[kind] += 1;
  if (result.errorSamples.length < 5) result.errorSamples.push(`${kind}: ${message}`);
};

/** Requests in a loop on one connection until the deadline. */
async function serve(conn: Http1Connection): Promise<void> {
  const head = requestHead(job.host, job.path, { 'CMCD-Status': `rtp=${job.rtpKbps}` });
  try {
    for (let first = true; beforeDeadline(); first = false) {
      const r = await conn.get(head);
      if (r.status !== 200) noteError('status', `status ${r.status}`);
      else if (r.bodyBytes !== job.fileBytes) noteError('short', `${r.bodyBytes} of ${job.fileBytes} bytes`);
      else (first ? result.firstResponseKbps : result.laterResponseKbps).push((r.bodyBytes * 8) / r.lastByteMs);
      result.responses += 1;
      result.bodyBytes += r.bodyBytes;
    }
  } catch (err) {
    // Closed by this process at the deadline: not an error.
    if (beforeDeadline()) {
      noteError('connection', (err as Error).message);
      open.delete(conn);
      conn.close();
    }
  }
}

async function scrape(): Promise<void> {
  const conn = await Http1Connection.open(job.host, job.port).catch(() => null);
  if (conn === null) return;
  // Http1Connection counts bodies without keeping them: read the text off the socket too.
  let text = '';
  conn.socket.on('data', (c: Buffer) => (text += c.toString('latin1')));
  while (beforeDeadline()) {
    text = '';
    await conn.get(requestHead(job.host, '/metrics')).catch(() => null);
    const active = /\nsammy_media_responses_active (\d+)/.exec(text);
    const workers = /\nsammy_workers (\d+)/.exec(text);
    const reporting = /\nsammy_metrics_workers_reporting (\d+)/.exec(text);
    // A scrape some worker did not answer in time holds only part of the server.
    const whole = workers === null || reporting?.[1] === workers[1];
    result.scrapes += 1;
    if (!whole) result.partialScrapes += 1;
    if (active !== null && whole) result.activeResponsesPeak = Math.max(result.activeResponsesPeak ?? 0, Number(active[1]));
    await new Promise((r) => setTimeout(r, 1000));
  }
  conn.close();
}

async function main(): Promise<void> {
  await new Promise((r) => setTimeout(r, Math.max(0, job.startAtEpochMs - Date.now())));
  const started: Array<Promise<void>> = [];
  if (job.scrapeMetrics) started.push(scrape());
  // `connectConcurrency` openers, each connecting one connection at a time; each
  // connection then runs on its own.
  let next = 0;
  const opener = async (): Promise<void> => {
    while (next < job.connections && beforeDeadline()) {
      next += 1;
      try {
        const conn = await Http1Connection.open(job.host, job.port, { timeoutMs: 30_000 });
        open.add(conn);
        result.opened += 1;
        result.peakOpen = Math.max(result.peakOpen, open.size);
        started.push(serve(conn));
      } catch (err) {
        noteError('connect', (err as Error).message);
      }
    }
  };
  await Promise.all(Array.from({ length: job.connectConcurrency }, opener));
  if (result.opened === job.connections) result.allOpenAfterMs = Date.now() - job.startAtEpochMs;
  const deadline = setTimeout(() => {
    for (const conn of open) conn.close();
  }, Math.max(0, job.holdUntilEpochMs - Date.now()));
  await Promise.all(started);
  clearTimeout(deadline);
  for (const conn of open) conn.close();
}

await main();
process.stdout.write(`${JSON.stringify(result)}\n`);
