/**
 * The video server (`server/`) inside the server namespace, one per session so each
 * session has its own telemetry log (`--log`, one JSON line per media response).
 */
import { join } from 'node:path';
import { startServer, type Managed } from '@sammy/server/process';
import { readTelemetry, type ResponseTelemetry } from '@sammy/server/telemetry';
import { netnsExec } from './netns.js';
import { REPO_DIR } from './paths.js';
import { LabError, stop } from './processes.js';
import { ADDRESSES, type Topology } from './topology.js';

/** The built player page (`npm run build -w @sammy/player`); SAMMY_LAB_PLAYER_DIR serves another build. */
export const PLAYER_DIST = process.env.SAMMY_LAB_PLAYER_DIR ?? join(REPO_DIR, 'player', 'dist');

export interface VideoServer {
  url: string;
  logFile: string;
  args: string[];
  process: Managed;
}

/**
 * Fixed ports (the namespace is the lab's own): the page's origin, and with it the
 * player history in localStorage, stays the same from one session to the next.
 */
export const VIDEO_PORT = 8080;
export const NEIGHBOUR_VIDEO_PORT = 8081;

export interface ServerOptions {
  mediaDir: string;
  logFile: string;
  burstPackets: number;
  extraArgs: string[];
  port: number;
}

export function serverArgs(o: ServerOptions): string[] {
  return [
    '--media', o.mediaDir, '--host', '0.0.0.0', '--port', String(o.port), '--player', PLAYER_DIST,
    '--burst-packets', String(o.burstPackets), '--log', o.logFile, '--log-level', 'info', ...o.extraArgs,
  ];
}

export async function startVideoServer(topo: Topology, o: ServerOptions): Promise<VideoServer> {
  const args = serverArgs(o);
  const s = await startServer({ name: 'video server', args, cwd: REPO_DIR, wrap: (cmd, full) => netnsExec(topo.ns.server, cmd, full) });
  return { url: `http://${ADDRESSES.server}:${s.port}`, logFile: o.logFile, args, process: s.process };
}

export async function stopVideoServer(s: VideoServer): Promise<ResponseTelemetry[]> {
  const code = await stop(s.process);
  if (code !== 0 && code !== null) throw new LabError('LAB_SERVER_FAILED', `video server exited with ${code}: ${s.process.stderr().trim()}`);
  return readTelemetry(s.logFile);
}
