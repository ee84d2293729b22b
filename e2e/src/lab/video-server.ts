/**
 * The video server inside the server namespace, one per session so each session has
 * its own telemetry log (`--log`, one JSON line per media response): the Node server
 * (`server/`), a Traffic Server edge (`edge/`) in front of a Node origin with
 * --pacing off on the namespace's loopback, or nginx with the Sammy module (`nginx/`)
 * (scenario server.kind).
 */
import { join } from 'node:path';
import { EDGE_CLI, edgeUnavailableReason } from '@sammy/edge/edge';
import { buildAtsPlugin, buildNginxModule } from '@sammy/native/build';
import { NGINX_CLI, nginxUnavailableReason } from '@sammy/nginx/nginx';
import { SERVER_CLI, startServer, type Managed } from '@sammy/server/process';
import { readTelemetry, type ResponseTelemetry } from '@sammy/server/telemetry';
import { netnsExec } from './netns.js';
import { REPO_DIR } from '../paths.js';
import { LabError } from '../lab-error.js';
import { stop } from './processes.js';
import type { ServerKind, ServerProtocol } from '../scenario/server-kinds.js';
import type { LabCertificate } from './lab-tls.js';
import { ADDRESSES, type Topology } from './topology.js';

/** The built player page (`npm run build -w @sammy/player`); SAMMY_LAB_PLAYER_DIR serves another build. */
export const PLAYER_DIST = process.env.SAMMY_LAB_PLAYER_DIR ?? join(REPO_DIR, 'player', 'dist');

export interface VideoServer {
  url: string;
  logFile: string;
  args: string[];
  /** What the player talks to: the Node server, the edge or nginx. */
  process: Managed;
  /** The edge's origin (null for the Node server and nginx). */
  origin: Managed | null;
}

/**
 * Fixed ports (the namespace is the lab's own): the page's origin, and with it the
 * player history in localStorage, stays the same from one session to the next.
 */
export const VIDEO_PORT = 8080;
export const NEIGHBOUR_VIDEO_PORT = 8081;

export interface ServerOptions {
  kind: ServerKind;
  /** How the player reaches it (scenario `server.protocol`). */
  protocol: ServerProtocol;
  /** The lab's certificate, for a protocol over TLS; null for plain HTTP/1.1. */
  tls: Pick<LabCertificate, 'certFile' | 'keyFile'> | null;
  mediaDir: string;
  logFile: string;
  burstPackets: number;
  extraArgs: string[];
  port: number;
}

/**
 * What the Node server and nginx both take: the ladder and the page on the session's
 * port, one worker (not one per core), which keeps the lab's results comparable with
 * the runs made before the Node server had workers, and nginx's with the Node server's.
 */
function servingArgs(o: ServerOptions): string[] {
  return [
    '--media', o.mediaDir, '--host', '0.0.0.0', '--port', String(o.port), '--workers', '1', '--player', PLAYER_DIST, '--log', o.logFile,
    ...(o.tls === null ? [] : ['--tls-cert', o.tls.certFile, '--tls-key', o.tls.keyFile]),
  ];
}

export function serverArgs(o: ServerOptions): string[] {
  return [...servingArgs(o), ...(o.protocol === 'h2' ? ['--http2'] : []), '--burst-packets', String(o.burstPackets), '--log-level', 'info', ...o.extraArgs];
}

/** The edge's origin: the Node server unpaced (the edge paces), its own log beside the edge's. */
export function originArgs(o: ServerOptions): string[] {
  return serverArgs({ ...o, protocol: 'h1', tls: null, port: 0, logFile: o.logFile.replace(/(\.log)?$/, '.origin$1'), extraArgs: [...o.extraArgs, '--pacing', 'off'] });
}

/** The edge in front of `originUrl`, on the session's port, its telemetry in the session's log. */
export function edgeArgs(o: ServerOptions, originUrl: string): string[] {
  return ['--origin', originUrl, '--host', '0.0.0.0', '--port', String(o.port), '--log', o.logFile];
}

/** nginx's telemetry is the module's lines; no --burst-packets: its trains are the kernel's (the scenario refuses burstPackets). */
export function nginxArgs(o: ServerOptions): string[] {
  return [...servingArgs(o), ...o.extraArgs];
}

/** How the lab runs one kind of video server (server-kinds.ts says what it is). */
interface ServerLauncher {
  /** Why it cannot serve here (what it needs beyond the lab's tools), or null. */
  unavailableReason(): string | null;
  /** Builds the C it loads once, before the first session, so that session does not wait for it. */
  build(): Promise<unknown>;
  /** The command line entry of what the player talks to, and how long it may take to print its listening line. */
  cli: string;
  startTimeoutMs: number;
  /** Its command lines; the edge's origin port is chosen when the origin starts (`originPort`). */
  args(o: ServerOptions, originPort: number | string): { args: string[]; originArgs?: string[] };
}

/** Every kind's launcher, keyed by the names server-kinds.ts lists. */
export const SERVER_LAUNCHERS: Record<ServerKind, ServerLauncher> = {
  node: {
    unavailableReason: () => null,
    build: async () => null,
    cli: SERVER_CLI,
    startTimeoutMs: 30_000,
    args: (o) => ({ args: serverArgs(o) }),
  },
  'ats-edge': {
    unavailableReason: edgeUnavailableReason,
    build: buildAtsPlugin,
    cli: EDGE_CLI,
    // More than the edge's own 30 s wait for Traffic Server (edge.ts), so the edge reports why it did not start.
    startTimeoutMs: 120_000,
    args: (o, originPort) => ({ args: edgeArgs(o, `http://127.0.0.1:${originPort}`), originArgs: originArgs(o) }),
  },
  nginx: {
    unavailableReason: nginxUnavailableReason,
    build: buildNginxModule,
    cli: NGINX_CLI,
    startTimeoutMs: 30_000,
    args: (o) => ({ args: nginxArgs(o) }),
  },
};

export async function startVideoServer(topo: Topology, o: ServerOptions): Promise<VideoServer> {
  const wrap = (cmd: string, full: string[]) => netnsExec(topo.ns.server, cmd, full);
  const kind = SERVER_LAUNCHERS[o.kind];
  // The edge's origin first: the edge's command line names the port it got.
  const originCommand = kind.args(o, 0).originArgs;
  const origin = originCommand ? await startServer({ name: 'video origin', args: originCommand, cwd: REPO_DIR, wrap }) : null;
  try {
    const { args } = kind.args(o, origin?.port ?? 0);
    const name = origin ? 'video edge' : 'video server';
    const s = await startServer({ name, cli: kind.cli, args, cwd: REPO_DIR, wrap, timeoutMs: kind.startTimeoutMs });
    const scheme = o.tls === null ? 'http' : 'https';
    return { url: `${scheme}://${ADDRESSES.server}:${s.port}`, logFile: o.logFile, args, process: s.process, origin: origin?.process ?? null };
  } catch (err) {
    if (origin) await stop(origin.process);
    throw err;
  }
}

export async function stopVideoServer(s: VideoServer): Promise<ResponseTelemetry[]> {
  const code = await stop(s.process);
  if (s.origin !== null) await stop(s.origin);
  if (code !== 0 && code !== null) throw new LabError('LAB_SERVER_FAILED', `video server exited with ${code}: ${s.process.stderr().trim()}`);
  // The edge writes a line for every response it serves, the page too; the Node server and nginx (whose module is on in
  // /media/ only) write one for each media response.
  return readTelemetry(s.logFile).filter((t) => t.path.startsWith('/media/'));
}
