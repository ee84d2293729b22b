/**
 * `@sammy/edge/edge`: one Traffic Server edge with the sammy_edge plugin, from a
 * temporary folder, in the foreground of this process. `startEdge` resolves once
 * the edge answers HTTP; `stop()` ends Traffic Server and removes the folder.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  freePort,
  httpStatus,
  ownedTempFolder,
  reachableHost,
  removeStaleFolders as removeStaleTempFolders,
  serverUrl,
  start,
  stop,
  waitUntilReady,
  type Managed,
} from '@sammy/server/process';
import { ATS_BINDIR, atsConfigFiles, atsLayout, STATS_PATH, type AtsLayout } from './ats-config.js';
import { atsBuildUnavailableReason, buildAtsPlugin } from '@sammy/native/build';
import { EdgeError, resolveEdgeOptions, type EdgeOptions, type EdgeOptionsInput } from './options.js';

export const TRAFFIC_SERVER = join(ATS_BINDIR, 'traffic_server');
/** The edge's command line entry (`npm run edge` without npm and without the apt step). */
export const EDGE_CLI = join(dirname(fileURLToPath(import.meta.url)), 'cli.ts');
const START_TIMEOUT_MS = 30_000;
/**
 * Traffic Server drains its connections on SIGTERM (1-3 s here) before it exits; past
 * this it is killed: its cache is temporary and each telemetry line is flushed when
 * written. (The lab and the tests give a stopping process 3 s before SIGKILL.)
 */
const STOP_GRACE_MS = 2500;

/** Why an edge cannot start here (Traffic Server, its headers or a compiler missing), or null. */
export function edgeUnavailableReason(): string | null {
  if (process.platform !== 'linux') return `the edge needs Linux (SO_MAX_PACING_RATE); this is ${process.platform}`;
  if (!existsSync(TRAFFIC_SERVER)) return `Traffic Server is not installed (sudo apt-get install -y trafficserver trafficserver-dev)`;
  return atsBuildUnavailableReason();
}

export interface RunningEdge {
  options: EdgeOptions;
  /** `http://HOST:PORT` as the listening line gives it. */
  url: string;
  port: number;
  layout: AtsLayout;
  process: Managed;
  /** The plugin's telemetry lines (a link to --log FILE when one was given). */
  telemetryLog: string;
  /** Stops Traffic Server and removes the folder (not --log FILE); resolves with its exit code. */
  stop(): Promise<number | null>;
}

const FOLDER_PREFIX = 'sammy-edge-';

/**
 * Removes the folders of edges whose command line died without cleaning up (SIGKILL);
 * their Traffic Server got SIGTERM when its parent died.
 */
export function removeStaleFolders(dir = tmpdir()): string[] {
  return removeStaleTempFolders(FOLDER_PREFIX, dir);
}

function writeConfig(layout: AtsLayout, pluginPath: string, o: EdgeOptions): void {
  for (const dir of [layout.etc, layout.log, layout.run, layout.cache]) mkdirSync(dir, { recursive: true });
  for (const [path, text] of Object.entries(atsConfigFiles(layout, pluginPath, o))) writeFileSync(join(layout.root, path), text);
  if (o.logFile !== null) {
    // Traffic Server appends to the link's target: the lines land in --log FILE as they are flushed.
    const target = resolve(o.logFile);
    mkdirSync(dirname(target), { recursive: true });
    symlinkSync(target, layout.telemetryLog);
  }
}

function diagnosticsTail(layout: AtsLayout): string {
  try {
    return readFileSync(join(layout.log, 'diags.log'), 'utf8').trim().split('\n').slice(-5).join('\n');
  } catch {
    return '';
  }
}

/**
 * Builds the plugin, writes the configuration into a temporary folder and starts
 * Traffic Server; resolves once it answers. (To run an edge inside a network
 * namespace, start its command line there: `EDGE_CLI` with `startServer`'s `wrap`.)
 */
export async function startEdge(input: EdgeOptionsInput): Promise<RunningEdge> {
  const requested = resolveEdgeOptions(input);
  const reason = edgeUnavailableReason();
  if (reason !== null) throw new EdgeError('SAMMY_EDGE_UNAVAILABLE', reason);
  const pluginPath = await buildAtsPlugin();
  const options = { ...requested, port: requested.port === 0 ? await freePort(requested.host) : requested.port };
  removeStaleFolders();
  const layout = atsLayout(ownedTempFolder(FOLDER_PREFIX));
  const remove = (): void => rmSync(layout.root, { recursive: true, force: true });
  let child: Managed;
  try {
    writeConfig(layout, pluginPath, options);
    // Traffic Server ends with this process, however it ends (it is its parent).
    child = start('traffic_server', 'setpriv', ['--pdeathsig', 'TERM', '--', TRAFFIC_SERVER, `--run-root=${layout.runroot}`]);
  } catch (err) {
    remove();
    throw err;
  }
  const stopEdge = async (): Promise<number | null> => {
    const code = await stop(child, { graceMs: STOP_GRACE_MS });
    remove();
    return code;
  };
  const host = reachableHost(options.host);
  // Any status counts: the stats path needs no origin.
  const answers = async (): Promise<boolean> => (await httpStatus({ host, port: options.port, path: `/${STATS_PATH}` })) !== null;
  const outcome = await waitUntilReady(child, answers, START_TIMEOUT_MS);
  if (outcome !== 'ready') {
    const why = `${child.stderr().trim()}\n${diagnosticsTail(layout)}`.trim();
    await stopEdge();
    const what = outcome === 'exited' ? 'exited' : `did not answer within ${START_TIMEOUT_MS} ms`;
    throw new EdgeError('SAMMY_EDGE_FAILED', `Traffic Server ${what}: ${why}`);
  }
  return {
    options,
    url: serverUrl(options.host, options.port),
    port: options.port,
    layout,
    process: child,
    telemetryLog: options.logFile === null ? layout.telemetryLog : resolve(options.logFile),
    stop: stopEdge,
  };
}
