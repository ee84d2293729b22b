/**
 * `@sammy/nginx/nginx`: Debian's nginx with the Sammy module, from a temporary folder,
 * in the foreground of this process. `startNginx` resolves once nginx answers
 * `/healthz`; `stop()` ends nginx and removes the folder.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { buildNginxModule, NGINX_BINARY, nginxBuildUnavailableReason } from '@sammy/native/build';
import {
  childPids,
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
import { nginxLayout, renderNginxConfig, WANTED_OPEN_FILES, type NginxLayout } from './config.js';
import { NginxError, resolveNginxOptions, type NginxServerOptions, type NginxServerOptionsInput } from './options.js';

const execFileAsync = promisify(execFile);

/** nginx's command line entry (`npm run nginx` without npm and without the apt step), for `startServer({ cli })`. */
export const NGINX_CLI = join(dirname(fileURLToPath(import.meta.url)), 'cli.ts');
/** nginx starts in milliseconds; the module is built before this starts counting. */
const START_TIMEOUT_MS = 15_000;
/**
 * After SIGQUIT nginx closes idle connections at once and the rest after
 * worker_shutdown_timeout (1 s); past this it is killed. (The lab and the tests give a
 * stopping command line 3 s before SIGKILL.)
 */
const STOP_GRACE_MS = 2000;
const FOLDER_PREFIX = 'sammy-nginx-';

/** Why nginx with the module cannot run here (not Linux, nginx, its source tree or a compiler missing), or null. */
export function nginxUnavailableReason(): string | null {
  if (process.platform !== 'linux') return `the nginx module needs Linux (SO_MAX_PACING_RATE); this is ${process.platform}`;
  if (!existsSync(NGINX_BINARY)) return `nginx is not installed at ${NGINX_BINARY} (sudo apt-get install -y nginx-core nginx-dev)`;
  return nginxBuildUnavailableReason();
}

export interface RunningNginx {
  options: NginxServerOptions;
  /** `http://HOST:PORT` (or https) as the listening line gives it. */
  url: string;
  port: number;
  /** The temporary folder: nginx.conf, the pid, the error log, temporary files. */
  prefix: string;
  layout: NginxLayout;
  /** The module's telemetry lines (--log FILE when one was given). */
  telemetryLog: string;
  errorLog: string;
  /** The error log's last lines (what to show when nginx dies). */
  errorLogTail(): string;
  /** The nginx master. */
  process: Managed;
  /** Stops nginx (gracefully, then by force) and removes the folder (not --log FILE); resolves with its exit code. */
  stop(): Promise<number | null>;
}

/**
 * Removes the folders of runs whose command line died without cleaning up (SIGKILL);
 * their nginx got SIGTERM when its parent died.
 */
export function removeStaleFolders(dir = tmpdir()): string[] {
  return removeStaleTempFolders(FOLDER_PREFIX, dir);
}

/** The hard limit on open files, from /proc (Node has no getrlimit); null when unreadable. */
function hardOpenFilesLimit(): number | null {
  try {
    const m = /^Max open files\s+\S+\s+(\S+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    return m === null ? null : m[1] === 'unlimited' ? Infinity : Number(m[1]);
  } catch {
    return null;
  }
}

const isRoot = (): boolean => process.getuid?.() === 0;

/**
 * worker_rlimit_nofile: what a worker's 16,384 connections need, or the hard limit when
 * that is lower (raising it takes CAP_SYS_RESOURCE, which a container's root often
 * lacks; nginx would log an alert at every start).
 */
function openFilesLimit(): number {
  return Math.min(WANTED_OPEN_FILES, hardOpenFilesLimit() ?? WANTED_OPEN_FILES);
}

/**
 * Whether `pid` is (still) one of nginx's processes, not one that got its pid since. A worker
 * that has not yet set its title still shows its master's ("nginx: master process ...").
 */
function isNginxWorker(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').startsWith('nginx: ');
  } catch {
    return false;
  }
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // gone since it was looked at
  }
}

function tail(path: string, lines = 8): string {
  try {
    return readFileSync(path, 'utf8').trim().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

/** nginx's own verdict on the configuration in `layout` (`nginx -t`); throws SAMMY_NGINX_FAILED with its message. */
export async function checkNginxConfig(layout: NginxLayout): Promise<void> {
  try {
    await execFileAsync(NGINX_BINARY, ['-t', '-q', '-p', layout.prefix, '-e', layout.errorLog, '-c', layout.conf], { timeout: 30_000 });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new NginxError('SAMMY_NGINX_FAILED', `nginx -t refused ${layout.conf}: ${(e.stderr ?? '').trim() || e.message}`);
  }
}

/**
 * Builds the module, writes the configuration into a temporary folder, checks it with
 * `nginx -t` and starts nginx; resolves once it answers /healthz. (To run it inside a
 * network namespace, start its command line there: `NGINX_CLI` with `startServer`'s `wrap`.)
 */
export async function startNginx(input: NginxServerOptionsInput): Promise<RunningNginx> {
  const requested = resolveNginxOptions(input);
  const reason = nginxUnavailableReason();
  if (reason !== null) throw new NginxError('SAMMY_NGINX_UNAVAILABLE', reason);
  const modulePath = await buildNginxModule();
  const options = { ...requested, port: requested.port === 0 ? await freePort(requested.host) : requested.port };
  removeStaleFolders();
  const layout = nginxLayout(ownedTempFolder(FOLDER_PREFIX), options.logFile);
  const remove = (): void => rmSync(layout.prefix, { recursive: true, force: true });
  let child: Managed;
  try {
    const user = isRoot() ? userInfo().username : null;
    writeFileSync(layout.conf, renderNginxConfig({ options, modulePath, layout, user, openFilesLimit: openFilesLimit() }));
    mkdirSync(dirname(layout.telemetryLog), { recursive: true });
    await checkNginxConfig(layout);
    // nginx ends with this process, however it ends (it is its parent): SIGTERM is nginx's fast shutdown.
    const nginxArgs = ['-p', layout.prefix, '-e', layout.errorLog, '-c', layout.conf, '-g', 'daemon off;'];
    child = start('nginx', 'setpriv', ['--pdeathsig', 'TERM', '--', NGINX_BINARY, ...nginxArgs]);
  } catch (err) {
    remove();
    throw err;
  }
  // A master that dies (killed, or crashed) leaves its workers serving: they are remembered to be ended too.
  const master = child.child.pid ?? -1;
  const workers = new Set<number>();
  const noteWorkers = (): void => childPids(master).forEach((pid) => workers.add(pid));
  let stopping: Promise<number | null> | null = null;
  const stopNginx = (): Promise<number | null> =>
    (stopping ??= (async () => {
      noteWorkers();
      const code = await stop(child, { signal: 'SIGQUIT', graceMs: STOP_GRACE_MS });
      for (const pid of workers) if (isNginxWorker(pid)) killQuietly(pid);
      remove();
      return code;
    })());
  const tls = options.tls !== null;
  const host = reachableHost(options.host);
  // Ready once every worker runs (all of them known, to be ended with a master that dies) and one answers.
  const ready = async (): Promise<boolean> =>
    childPids(master).length >= options.workers && (await httpStatus({ host, port: options.port, path: '/healthz', tls })) === 200;
  const outcome = await waitUntilReady(child, ready, START_TIMEOUT_MS);
  noteWorkers();
  if (outcome !== 'ready') {
    const why = `${child.stderr().trim()}\n${tail(layout.errorLog)}`.trim();
    await stopNginx();
    const what = outcome === 'exited' ? 'exited' : `did not answer /healthz within ${START_TIMEOUT_MS} ms`;
    throw new NginxError('SAMMY_NGINX_FAILED', `nginx ${what}: ${why}`);
  }
  return {
    options,
    url: serverUrl(options.host, options.port, tls ? 'https' : 'http'),
    port: options.port,
    prefix: layout.prefix,
    layout,
    telemetryLog: layout.telemetryLog,
    errorLog: layout.errorLog,
    errorLogTail: () => tail(layout.errorLog),
    process: child,
    stop: stopNginx,
  };
}
