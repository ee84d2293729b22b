// Bench section `tls` (npm run bench -w @sammy/server -- --only tls): server CPU per
// GB served over HTTPS, Sammy beside Debian's nginx, with the same self-signed
// certificate and the same clients (16 keep-alive connections fetching 1 MB
// segments), and the same two servers over plain HTTP in the same run, so the
// cost of TLS itself is a ratio measured here too.
//
// nginx over TLS cannot use sendfile either (OpenSSL encrypts in user space; this
// kernel has no kTLS), so the TLS rows compare two user-space encryptors.
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeSelfSignedCert, opensslMissing } from './certificate.js';
import type { ClientJob, LoadResult } from './client.js';
import { fmt, type BenchKit, type BenchServer } from './kit.js';

const FILES = 16;
const FILE_BYTES = 1_000_000;
const CONNECTIONS = 16;
const PACE_BYTES_PER_S = 2_000_000; // 16 Mbit/s per connection, as the cpu section
const NGINX_PORTS = { plain: 18_090, tls: 18_091 };

export type TlsRowId = 'nginxTls' | 'unpacedTls' | 'pacedKernelTls' | 'pacedDefaultTls' | 'nginx' | 'unpaced';

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
}

export interface TlsRatios {
  /** Sammy over nginx, both over TLS. */
  unpacedVsNginx?: number;
  pacedKernelVsNginx?: number;
  pacedDefaultVsNginx?: number;
  /** Each server's TLS cost: CPU per GB over HTTPS / over HTTP. */
  sammyTlsOverPlain: number;
  nginxTlsOverPlain?: number;
}

/** The ratios, by row id (a missing nginx leaves its ratios out). */
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
  return ratios;
}

async function measure(kit: BenchKit, server: BenchServer, https: boolean, paced: boolean, id: TlsRowId, config: string): Promise<TlsRow> {
  const base = `${https ? 'https' : 'http'}://${kit.net.serverIp}:${server.port}/media`;
  const before = kit.cpuSeconds(server.pid);
  const r = await kit.runClient<LoadResult>('bench/client.ts', {
    kind: 'load',
    urls: Array.from({ length: FILES }, (_, i) => `${base}/tls-seg-${i}.m4s`),
    headers: paced ? { 'CMCD-Status': `rtp=${(PACE_BYTES_PER_S * 8) / 1000}` } : {},
    connections: CONNECTIONS,
    targetBytes: paced ? CONNECTIONS * PACE_BYTES_PER_S * 10 : 2000 * FILE_BYTES,
    maxS: paced ? 20 : 15,
  } satisfies ClientJob);
  const cpuS = kit.cpuSeconds(server.pid) - before;
  return { id, config, bytes: r.bytes, elapsedS: r.elapsedS, cpuS, cpuSPerGB: cpuS / (r.bytes / 1e9), protocol: r.tls?.protocol ?? null, cipher: r.tls?.cipher ?? null };
}

export async function tlsSection(kit: BenchKit): Promise<{ rows: TlsRow[]; ratios: TlsRatios } | { skipped: string }> {
  kit.say(`## HTTPS: server CPU per GB, ${CONNECTIONS} keep-alive clients fetching ${FILES} x 1 MB segments, beside nginx over HTTPS (same certificate)`);
  kit.say();
  const missing = opensslMissing();
  if (missing !== null) {
    kit.say(`SKIP: ${missing}`);
    return { skipped: missing };
  }
  for (let i = 0; i < FILES; i++) writeFileSync(join(kit.mediaDir, `tls-seg-${i}.m4s`), randomBytes(FILE_BYTES));
  const cert = makeSelfSignedCert(kit.work, 'bench', [kit.net.serverIp]);
  const tlsArgs = ['--tls-cert', cert.certFile, '--tls-key', cert.keyFile];
  const rows: TlsRow[] = [];
  const run = async (server: BenchServer | null, steps: Array<[https: boolean, paced: boolean, id: TlsRowId, config: string]>): Promise<void> => {
    if (server === null) return;
    try {
      for (const [https, paced, id, config] of steps) rows.push(await measure(kit, server, https, paced, id, config));
    } finally {
      await kit.stop(server);
    }
  };
  // One worker each, as nginx's one worker process: CPU per GB, not cores, is compared.
  await run(await kit.startSammy('tls-auto', ['--workers', '1', ...tlsArgs]), [
    [true, false, 'unpacedTls', 'sammy HTTPS unpaced'],
    [true, true, 'pacedDefaultTls', `sammy HTTPS paced ${PACE_BYTES_PER_S / 1e6} MB/s, N=4 (default plan)`],
  ]);
  await run(await kit.startSammy('tls-kernel', ['--workers', '1', '--burst-mode', 'kernel', ...tlsArgs]), [
    [true, true, 'pacedKernelTls', `sammy HTTPS paced ${PACE_BYTES_PER_S / 1e6} MB/s, --burst-mode kernel`],
  ]);
  await run(await kit.startSammy('plain-auto', ['--workers', '1']), [[false, false, 'unpaced', 'sammy HTTP unpaced']]);
  await run(await kit.startNginx('nginx-tls', NGINX_PORTS.tls, { limitRateBytesPerS: null, tls: cert }), [[true, false, 'nginxTls', 'nginx HTTPS (OpenSSL, no sendfile)']]);
  await run(await kit.startNginx('nginx-plain', NGINX_PORTS.plain, { limitRateBytesPerS: null }), [[false, false, 'nginx', 'nginx HTTP (sendfile)']]);
  kit.table(
    ['configuration', 'GB served', 'seconds', 'server CPU s', 'CPU s per GB', 'negotiated'],
    rows.map((r) => [r.config, fmt(r.bytes / 1e9, 3), fmt(r.elapsedS, 1), fmt(r.cpuS, 2), fmt(r.cpuSPerGB, 2), r.cipher === null ? '-' : `${r.protocol} ${r.cipher}`]),
  );
  kit.say();
  const ratios = tlsRatios(rows);
  if (ratios.unpacedVsNginx !== undefined) {
    kit.say(`CPU per GB over HTTPS, sammy unpaced / nginx: ${fmt(ratios.unpacedVsNginx)}x`);
    kit.say(`CPU per GB over HTTPS, sammy paced (kernel trains) / nginx: ${fmt(ratios.pacedKernelVsNginx!)}x`);
    kit.say(`CPU per GB over HTTPS, sammy paced (default plan, N=4) / nginx: ${fmt(ratios.pacedDefaultVsNginx!)}x`);
  }
  kit.say(`TLS cost, CPU per GB over HTTPS / over HTTP: sammy ${fmt(ratios.sammyTlsOverPlain)}x${ratios.nginxTlsOverPlain === undefined ? '' : `, nginx ${fmt(ratios.nginxTlsOverPlain)}x`}`);
  kit.say();
  return { rows, ratios };
}
