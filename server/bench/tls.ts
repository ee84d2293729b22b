// Bench section `tls` (npm run bench -w @sammy/server -- --only tls): server CPU per
// GB served over HTTPS, Sammy beside Debian's nginx, with the same self-signed
// certificate and the same clients (16 keep-alive connections fetching 1 MB
// segments), and the same two servers over plain HTTP in the same run, so the
// cost of TLS itself is a ratio measured here too; then both over HTTP/2 (Sammy
// `--http2`, nginx `listen ... ssl http2`), 4 connections of 4 streams, so what
// HTTP/2 costs each server is a ratio against its own HTTP/1.1 over TLS in the run.
//
// nginx over TLS cannot use sendfile either (OpenSSL encrypts in user space; this
// kernel has no kTLS), so the TLS rows compare two user-space encryptors.
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeSelfSignedCert, opensslMissing } from './certificate.js';
import type { ClientJob, LoadJob, LoadResult } from './client.js';
import { fmt, markdownTable, median, type BenchKit, type BenchServer } from './kit.js';

const FILES = 16;
const FILE_BYTES = 1_000_000;
const CONNECTIONS = 16;
const PACE_BYTES_PER_S = 2_000_000; // 16 Mbit/s per connection, as the cpu section
/**
 * HTTP/2: 4 connections of 4 concurrent streams, so 16 responses are in flight at once
 * as over HTTP/1.1, and every connection is shared (a player has one per origin).
 * Paced, every stream asks for PACE_BYTES_PER_S: each connection's cap (the sum of its
 * streams' rates) is 8 MB/s and the total 32 MB/s, the HTTP/1.1 rows' total, so both
 * serve the same 32 responses a second at the same rate each.
 */
const H2_CONNECTIONS = 4;
const H2_STREAMS_PER_CONNECTION = CONNECTIONS / H2_CONNECTIONS;
/** The clients' summed pace in a paced row, whatever the protocol. */
const PACED_TOTAL_BYTES_PER_S = CONNECTIONS * PACE_BYTES_PER_S;
const NGINX_PORTS = { plain: 18_090, tls: 18_091, h2: 18_092 };

export type TlsRowId = 'nginxTls' | 'unpacedTls' | 'pacedKernelTls' | 'pacedDefaultTls' | 'nginx' | 'unpaced' | 'nginxH2' | 'unpacedH2' | 'pacedH2';

export interface TlsRow {
  id: TlsRowId;
  config: string;
  bytes: number;
  elapsedS: number;
  cpuS: number;
  cpuSPerGB: number;
  /** What the client negotiated (HTTPS rows). */
  protocol: string | null;
  cipher: string | null;
  /** The client's ALPN result: `h2`, or null when none was offered (node:https offers none, so HTTP/1.1). */
  alpn?: string | null;
  /** The clients' medians: from a request to its response's head, and to its last byte. */
  medianHeadMs?: number | null;
  medianResponseMs?: number | null;
  /** Paced rows: the clients' summed pace (bytes/s); null unpaced. */
  pacedTotalBytesPerS?: number | null;
  /** Sammy's rows: its telemetry lines of the row, counted by protocol; null for nginx (no lines). */
  serverLinesByProtocol?: Record<string, number> | null;
  /** Sammy's paced rows: the median of the lines' socket caps (bytes/s; over HTTP/2 the connection's, the sum of its streams' rates). */
  medianCapBytesPerS?: number | null;
  /** Sammy's paced rows: the median of the lines' achieved rates (a response's or stream's bytes over its duration). */
  medianAchievedBytesPerS?: number | null;
}

export interface TlsRatios {
  /** Sammy over nginx, both over TLS. */
  unpacedVsNginx?: number;
  pacedKernelVsNginx?: number;
  pacedDefaultVsNginx?: number;
  /** Each server's TLS cost: CPU per GB over HTTPS / over HTTP. */
  sammyTlsOverPlain: number;
  nginxTlsOverPlain?: number;
  /** Sammy over nginx, both over HTTP/2. */
  unpacedH2VsNginxH2?: number;
  pacedH2VsNginxH2?: number;
  /** Each server's HTTP/2 cost: CPU per GB over HTTP/2 / over HTTP/1.1 with TLS (paced: both with the kernel's trains). */
  sammyUnpacedH2OverTls?: number;
  sammyPacedH2OverTls?: number;
  nginxH2OverTls?: number;
}

/** The ratios, by row id (a missing nginx, or missing HTTP/2 rows, leave theirs out). */
export function tlsRatios(rows: readonly TlsRow[]): TlsRatios {
  const perGB = (id: TlsRowId): number | undefined => rows.find((r) => r.id === id)?.cpuSPerGB;
  const need = (id: TlsRowId): number => {
    const v = perGB(id);
    if (v === undefined) throw new Error(`bench tls: no row '${id}'`);
    return v;
  };
  const ratios: TlsRatios = { sammyTlsOverPlain: need('unpacedTls') / need('unpaced') };
  const nginxTls = perGB('nginxTls');
  if (nginxTls !== undefined) {
    ratios.unpacedVsNginx = need('unpacedTls') / nginxTls;
    ratios.pacedKernelVsNginx = need('pacedKernelTls') / nginxTls;
    ratios.pacedDefaultVsNginx = need('pacedDefaultTls') / nginxTls;
    const nginxPlain = perGB('nginx');
    if (nginxPlain !== undefined) ratios.nginxTlsOverPlain = nginxTls / nginxPlain;
  }
  if (perGB('unpacedH2') !== undefined) {
    ratios.sammyUnpacedH2OverTls = need('unpacedH2') / need('unpacedTls');
    ratios.sammyPacedH2OverTls = need('pacedH2') / need('pacedKernelTls');
    const nginxH2 = perGB('nginxH2');
    if (nginxH2 !== undefined) {
      ratios.unpacedH2VsNginxH2 = need('unpacedH2') / nginxH2;
      ratios.pacedH2VsNginxH2 = need('pacedH2') / nginxH2;
      ratios.nginxH2OverTls = nginxH2 / need('nginxTls');
    }
  }
  return ratios;
}

/** What the section writes to the JSON: its load, its rows and their ratios. */
export interface TlsSection {
  load: { files: number; fileBytes: number; connections: number; paceBytesPerS: number; h2Connections: number; h2StreamsPerConnection: number };
  /** /proc/loadavg's 1, 5 and 15 minute figures when the section started and ended (the machine is shared). */
  loadAverage?: { before: number[]; after: number[] };
  rows: TlsRow[];
  ratios: TlsRatios;
}

/** The ratio lines under the table: a label, then each ratio's label and key. */
const RATIO_LINES: Array<[string, Array<[string, keyof TlsRatios]>]> = [
  ['CPU per GB, sammy / nginx, both HTTP/1.1 over TLS', [['unpaced', 'unpacedVsNginx'], ['paced, kernel trains', 'pacedKernelVsNginx'], ['paced, default plan (N=4)', 'pacedDefaultVsNginx']]],
  ['CPU per GB, sammy / nginx, both HTTP/2', [['unpaced', 'unpacedH2VsNginxH2'], ['paced', 'pacedH2VsNginxH2']]],
  ['What HTTP/2 costs, CPU per GB over HTTP/2 / over HTTP/1.1 with TLS', [['sammy unpaced', 'sammyUnpacedH2OverTls'], ['sammy paced (kernel trains both)', 'sammyPacedH2OverTls'], ['nginx', 'nginxH2OverTls']]],
  ['What TLS costs, CPU per GB over HTTPS / over HTTP', [['sammy', 'sammyTlsOverPlain'], ['nginx', 'nginxTlsOverPlain']]],
];

/**
 * The section's table and ratios in markdown, from one run or several (each cell then
 * gives every run's figure in order): what the bench prints, and what `--render`
 * prints again from the JSON files.
 */
export function tlsReport(runs: readonly TlsSection[]): string[] {
  const cells = (id: TlsRowId, cell: (r: TlsRow) => string): string => {
    const values = runs.map((run) => run.rows.find((r) => r.id === id)).map((r) => (r === undefined ? '-' : cell(r)));
    // One value when every run says the same (the negotiated protocol, the config).
    return new Set(values).size === 1 ? values[0]! : values.join(', ');
  };
  const ids = [...new Set(runs.flatMap((run) => run.rows.map((r) => r.id)))];
  const negotiated = (r: TlsRow): string => (r.cipher === null ? '-' : `${r.alpn ?? 'http/1.1'} ${r.protocol} ${r.cipher}`);
  const pace = (r: TlsRow): string => (r.pacedTotalBytesPerS == null ? '-' : fmt(r.bytes / r.elapsedS / r.pacedTotalBytesPerS));
  const lines = (r: TlsRow): string =>
    r.serverLinesByProtocol == null ? '-' : Object.entries(r.serverLinesByProtocol).map(([protocol, n]) => `${n} ${protocol}`).join(' + ') || '0';
  const mbPerS = (bytesPerS: number | null | undefined): string => (bytesPerS == null ? '-' : fmt(bytesPerS / 1e6));
  const out = markdownTable(
    ['configuration', 'negotiated', 'GB served', 'seconds', 'CPU s per GB', 'achieved / paced total', 'client: median ms to last byte (to head)', "sammy's lines", 'median cap MB/s', 'median achieved MB/s'],
    ids.map((id) => [
      cells(id, (r) => r.config),
      cells(id, negotiated),
      cells(id, (r) => fmt(r.bytes / 1e9, 3)),
      cells(id, (r) => fmt(r.elapsedS, 1)),
      cells(id, (r) => fmt(r.cpuSPerGB, 2)),
      cells(id, pace),
      cells(id, (r) => (r.medianResponseMs == null ? '-' : `${fmt(r.medianResponseMs, 0)} (${fmt(r.medianHeadMs ?? NaN, 0)})`)),
      cells(id, lines),
      cells(id, (r) => mbPerS(r.medianCapBytesPerS)),
      cells(id, (r) => mbPerS(r.medianAchievedBytesPerS)),
    ]),
  );
  out.push('');
  const loads = runs.map((run) => (run.loadAverage === undefined ? '-' : `${run.loadAverage.before[0]} before, ${run.loadAverage.after[0]} after`));
  // List items, so that markdown keeps them apart.
  out.push(`- Load average (1 minute): ${loads.join('; ')}`);
  for (const [label, parts] of RATIO_LINES) {
    const found = parts.filter(([, key]) => runs.some((run) => run.ratios[key] !== undefined));
    if (found.length === 0) continue;
    const each = (key: keyof TlsRatios): string => runs.map((run) => (run.ratios[key] === undefined ? '-' : `${fmt(run.ratios[key])}x`)).join(', ');
    out.push(`- ${label}: ${found.map(([part, key]) => `${part} ${each(key)}`).join('; ')}`);
  }
  return out;
}

/** /proc/loadavg's 1, 5 and 15 minute load averages. */
const loadAverage = (): number[] => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).map(Number);

/** How a row's clients reach the server. */
interface Load {
  https: boolean;
  http2: boolean;
  paced: boolean;
}

/** The client job for a load: `seconds` of the paced total when paced, else `unpacedBytes` (both within maxS). */
function jobFor(server: BenchServer, serverIp: string, load: Load, seconds: number, unpacedBytes: number, maxS: number): ClientJob {
  const base = `${load.https ? 'https' : 'http'}://${serverIp}:${server.port}/media`;
  const common: Omit<LoadJob, 'kind' | 'connections'> = {
    urls: Array.from({ length: FILES }, (_, i) => `${base}/tls-seg-${i}.m4s`),
    headers: load.paced ? { 'CMCD-Status': `rtp=${(PACE_BYTES_PER_S * 8) / 1000}` } : {},
    targetBytes: load.paced ? PACED_TOTAL_BYTES_PER_S * seconds : unpacedBytes,
    maxS,
  };
  return load.http2
    ? { kind: 'h2', ...common, connections: H2_CONNECTIONS, streamsPerConnection: H2_STREAMS_PER_CONNECTION }
    : { kind: 'load', ...common, connections: CONNECTIONS };
}

/**
 * Unmeasured, before a server's rows: V8 optimises a function only after many calls, and a
 * server's first row would otherwise pay for compiling the code every later row reuses (the cpu
 * section's "Why the paced warm-up"). Paced too for a server with paced rows, so that they are not its first.
 */
async function warmUp(kit: BenchKit, server: BenchServer, load: Omit<Load, 'paced'>, withPaced: boolean): Promise<void> {
  for (const paced of withPaced ? [false, true] : [false]) {
    await kit.runClient<LoadResult>('bench/client.ts', jobFor(server, kit.net.serverIp, { ...load, paced }, 3, 200 * FILE_BYTES, 5));
  }
}

/** Sammy's lines of a row by protocol, and the median socket cap and achieved rate of its paced ones. */
function serverLines(kit: BenchKit, server: BenchServer, linesBefore: number): Pick<TlsRow, 'serverLinesByProtocol' | 'medianCapBytesPerS' | 'medianAchievedBytesPerS'> {
  if (server.logFile === null) return { serverLinesByProtocol: null, medianCapBytesPerS: null, medianAchievedBytesPerS: null };
  const lines = kit.telemetry(server).slice(linesBefore);
  const byProtocol: Record<string, number> = {};
  for (const line of lines) byProtocol[line.protocol ?? '?'] = (byProtocol[line.protocol ?? '?'] ?? 0) + 1;
  const paced = lines.filter((line) => line.pacing === 'paced');
  const medianOrNull = (values: number[]): number | null => (values.length === 0 ? null : median(values));
  return {
    serverLinesByProtocol: byProtocol,
    medianCapBytesPerS: medianOrNull(paced.flatMap((line) => (typeof line.maxPacingRateBytesPerS === 'number' ? [line.maxPacingRateBytesPerS] : []))),
    medianAchievedBytesPerS: medianOrNull(paced.flatMap((line) => (line.achievedRateKbps === null ? [] : [(line.achievedRateKbps * 1000) / 8]))),
  };
}

/** The lines of responses that end just after their client has the bytes (the warm-up's, a row's last) are in by then. */
const LINES_SETTLE_MS = 300;

async function measure(kit: BenchKit, server: BenchServer, load: Load, id: TlsRowId, config: string): Promise<TlsRow> {
  await new Promise((resolve) => setTimeout(resolve, LINES_SETTLE_MS));
  const linesBefore = kit.telemetry(server).length;
  const before = kit.cpuSeconds(server.pid);
  const r = await kit.runClient<LoadResult>('bench/client.ts', jobFor(server, kit.net.serverIp, load, 10, 2000 * FILE_BYTES, load.paced ? 20 : 15));
  const cpuS = kit.cpuSeconds(server.pid) - before;
  await new Promise((resolve) => setTimeout(resolve, LINES_SETTLE_MS));
  return {
    id,
    config,
    bytes: r.bytes,
    elapsedS: r.elapsedS,
    cpuS,
    cpuSPerGB: cpuS / (r.bytes / 1e9),
    protocol: r.tls?.protocol ?? null,
    cipher: r.tls?.cipher ?? null,
    alpn: r.tls?.alpn ?? null,
    medianHeadMs: r.medianHeadMs ?? null,
    medianResponseMs: r.medianResponseMs ?? null,
    pacedTotalBytesPerS: load.paced ? PACED_TOTAL_BYTES_PER_S : null,
    ...serverLines(kit, server, linesBefore),
  };
}

export async function tlsSection(kit: BenchKit): Promise<TlsSection | { skipped: string }> {
  kit.say(`## HTTPS: server CPU per GB, ${CONNECTIONS} keep-alive clients fetching ${FILES} x 1 MB segments, beside nginx over HTTPS (same certificate); then HTTP/2, ${H2_CONNECTIONS} connections x ${H2_STREAMS_PER_CONNECTION} streams`);
  kit.say();
  const missing = opensslMissing();
  if (missing !== null) {
    kit.say(`SKIP: ${missing}`);
    return { skipped: missing };
  }
  const loadBefore = loadAverage();
  for (let i = 0; i < FILES; i++) writeFileSync(join(kit.mediaDir, `tls-seg-${i}.m4s`), randomBytes(FILE_BYTES));
  const cert = makeSelfSignedCert(kit.work, 'bench', [kit.net.serverIp]);
  const tlsArgs = ['--tls-cert', cert.certFile, '--tls-key', cert.keyFile];
  const rows: TlsRow[] = [];
  const h1 = { https: true, http2: false };
  const h2 = { https: true, http2: true };
  const plain = { https: false, http2: false };
  const run = async (server: BenchServer | null, load: Omit<Load, 'paced'>, steps: Array<[paced: boolean, id: TlsRowId, config: string]>): Promise<void> => {
    if (server === null) return;
    try {
      await warmUp(kit, server, load, steps.some(([paced]) => paced));
      for (const [paced, id, config] of steps) rows.push(await measure(kit, server, { ...load, paced }, id, config));
    } finally {
      await kit.stop(server);
    }
  };
  const paceMB = PACE_BYTES_PER_S / 1e6;
  // One worker each, as nginx's one worker process: CPU per GB, not cores, is compared.
  await run(await kit.startSammy('tls-auto', ['--workers', '1', ...tlsArgs]), h1, [
    [false, 'unpacedTls', 'sammy HTTPS unpaced'],
    [true, 'pacedDefaultTls', `sammy HTTPS paced ${paceMB} MB/s, N=4 (default plan)`],
  ]);
  await run(await kit.startSammy('tls-kernel', ['--workers', '1', '--burst-mode', 'kernel', ...tlsArgs]), h1, [
    [true, 'pacedKernelTls', `sammy HTTPS paced ${paceMB} MB/s, --burst-mode kernel`],
  ]);
  // Over HTTP/2 the trains are the kernel's whatever the burst mode (application bursts are per response).
  await run(await kit.startSammy('h2', ['--workers', '1', '--http2', ...tlsArgs]), h2, [
    [false, 'unpacedH2', 'sammy HTTP/2 unpaced'],
    [true, 'pacedH2', `sammy HTTP/2 paced ${paceMB} MB/s a stream (${(paceMB * H2_STREAMS_PER_CONNECTION).toFixed(0)} MB/s a connection)`],
  ]);
  await run(await kit.startSammy('plain-auto', ['--workers', '1']), plain, [[false, 'unpaced', 'sammy HTTP unpaced']]);
  await run(await kit.startNginx('nginx-tls', NGINX_PORTS.tls, { limitRateBytesPerS: null, tls: cert }), h1, [[false, 'nginxTls', 'nginx HTTPS (OpenSSL, no sendfile)']]);
  await run(await kit.startNginx('nginx-h2', NGINX_PORTS.h2, { limitRateBytesPerS: null, tls: cert, http2: true }), h2, [[false, 'nginxH2', 'nginx HTTP/2 (OpenSSL, no sendfile)']]);
  await run(await kit.startNginx('nginx-plain', NGINX_PORTS.plain, { limitRateBytesPerS: null }), plain, [[false, 'nginx', 'nginx HTTP (sendfile)']]);
  const section: TlsSection = {
    load: { files: FILES, fileBytes: FILE_BYTES, connections: CONNECTIONS, paceBytesPerS: PACE_BYTES_PER_S, h2Connections: H2_CONNECTIONS, h2StreamsPerConnection: H2_STREAMS_PER_CONNECTION },
    loadAverage: { before: loadBefore, after: loadAverage() },
    rows,
    ratios: tlsRatios(rows),
  };
  for (const line of tlsReport([section])) kit.say(line);
  kit.say();
  return section;
}
