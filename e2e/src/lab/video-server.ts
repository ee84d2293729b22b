/**
 * The video server inside the server namespace, one per session so each session has
 * its own telemetry log (`--log`, one JSON line per media response): the Node server
 * (`server/`), or a Traffic Server edge (`edge/`) in front of a Node origin with
 * --pacing off on the namespace's loopback (scenario server.kind).
 */
import { join } from 'node:path';
import { EDGE_CLI } from '@sammy/edge/edge';
import { startServer, type Managed } from '@sammy/server/process';
import { readTelemetry, type ResponseTelemetry } from '@sammy/server/telemetry';
import { netnsExec } from './netns.js';
import { REPO_DIR } from './paths.js';
import { LabError, stop } from './processes.js';
import type { ServerKind } from './scenario.js';
import { ADDRESSES, type Topology } from './topology.js';

/** The built player page (`npm run build -w @sammy/player`); SAMMY_LAB_PLAYER_DIR serves another build. */
export const PLAYER_DIST = process.env.SAMMY_LAB_PLAYER_DIR ?? join(REPO_DIR, 'player', 'dist');

export interface VideoServer {
  url: string;
  logFile: string;
  args: string[];
  /** What the player talks to: the Node server, or the edge. */
  process: Managed;
  /** The edge's origin (null for the Node server). */
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
  mediaDir: string;
  logFile: string;
  burstPackets: number;
  extraArgs: string[];
  port: number;
}

/**
 * One server process (`--workers 1`, not one per core): the lab splits its telemetry
 * per session from one process's log, and keeps its results comparable with the runs
 * made before the server had workers.
 */
export function serverArgs(o: ServerOptions): string[] {
  return [
    '--media', o.mediaDir, '--host', '0.0.0.0', '--port', String(o.port), '--workers', '1', '--player', PLAYER_DIST,
    '--burst-packets', String(o.burstPackets), '--log', o.logFile, '--log-level', 'info', ...o.extraArgs,
  ];
}

/** The edge's origin: the Node server unpaced (the edge paces), its own log beside the edge's. */
export function originArgs(o: ServerOptions): string[] {
  return serverArgs({ ...o, port: 0, logFile: o.logFile.replace(/(\.log)?$/, '.origin$1'), extraArgs: [...o.extraArgs, '--pacing', 'off'] });
}

/** The edge in front of `originUrl`, on the session's port, its telemetry in the session's log. */
export function edgeArgs(o: ServerOptions, originUrl: string): string[] {
  return ['--origin', originUrl, '--host', '0.0.0.0', '--port', String(o.port), '--log', o.logFile];
}

export async function startVideoServer(topo: Topology, o: ServerOptions): Promise<VideoServer> {
  const wrap = (cmd: string, full: string[]) => netnsExec(topo.ns.server, cmd, full);
  if (o.kind === 'node') {
    const args = serverArgs(o);
    const s = await startServer({ name: 'video server', args, cwd: REPO_DIR, wrap });
    return { url: `http://${ADDRESSES.server}:${s.port}`, logFile: o.logFile, args, process: s.process, origin: null };
  }
  const origin = await startServer({ name: 'video origin', args: originArgs(o), cwd: REPO_DIR, wrap });
  try {
    const args = edgeArgs(o, `http://127.0.0.1:${origin.port}`);
    const edge = await startServer({ name: 'video edge', cli: EDGE_CLI, args, cwd: REPO_DIR, wrap, timeoutMs: 120_000 });
    return { url: `http://${ADDRESSES.server}:${edge.port}`, logFile: o.logFile, args, process: edge.process, origin: origin.process };
  } catch (err) {
    await stop(origin.process);
    throw err;
  }
}

export async function stopVideoServer(s: VideoServer): Promise<ResponseTelemetry[]> {
  const code = await stop(s.process);
  if (s.origin !== null) await stop(s.origin);
  if (code !== 0 && code !== null) throw new LabError('LAB_SERVER_FAILED', `video server exited with ${code}: ${s.process.stderr().trim()}`);
  // The edge writes a line for every response it serves, the page too; the Node server only for /media/.
  return readTelemetry(s.logFile).filter((t) => s.origin === null || t.path.startsWith('/media/'));
}
