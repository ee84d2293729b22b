/**
 * `@sammy/server/process`: starting this project's processes and waiting for them,
 * shared by the server bench, the lab and the tests.
 *
 * The contract of `npm run serve` with scripts: once the server accepts connections it
 * prints exactly one line `listening on http://HOST:PORT` on stdout (`https://` with
 * --tls-cert; an IPv6 host in brackets; with `--port 0`, the port the kernel chose;
 * with --workers N, once every worker listens), and it exits on SIGTERM or
 * SIGINT after closing its connections and writing the telemetry lines of responses
 * still in flight. Errors go to stderr as `serve: CODE: message` with exit status 2.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export class ProcessError extends Error {
  constructor(
    readonly code: 'SAMMY_PROCESS_EXITED' | 'SAMMY_PROCESS_TIMEOUT',
    message: string,
  ) {
    super(message);
    this.name = 'ProcessError';
  }
}

/** `http://HOST:PORT` (an IPv6 host in brackets), as the listening line names a server. */
export function serverUrl(host: string, port: number, scheme: 'http' | 'https' = 'http'): string {
  return `${scheme}://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** The line `npm run serve` prints once it accepts connections. */
export function listeningLine(host: string, port: number, scheme: 'http' | 'https' = 'http'): string {
  return `listening on ${serverUrl(host, port, scheme)}\n`;
}

/** A whole `listening on` line in a process's output; group 1 the URL, group 2 the port. */
export const LISTENING_LINE = /listening on (https?:\/\/\S+:(\d+))\n/;

/** The server's URL and port from its output, or null before the line is printed. */
export function parseListeningLine(output: string): { url: string; port: number } | null {
  const m = LISTENING_LINE.exec(output);
  return m ? { url: m[1]!, port: Number(m[2]) } : null;
}

/** The server's command line entry (`npm run serve` without npm). */
export const SERVER_CLI = join(dirname(fileURLToPath(import.meta.url)), 'cli.ts');

/** A started child with its whole stdout kept (the tools print their results there) and the tail of its stderr. */
export interface Managed {
  name: string;
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** Resolves with the exit code (null when killed by a signal; -1 when it could not start). */
  exited: Promise<number | null>;
}

const STDERR_KEPT_CHARS = 20_000;
const live = new Set<Managed>();

/** `stdin: true` gives the child a pipe to read commands from (`child.stdin`); by default it has none. */
export function start(name: string, cmd: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv; stdin?: boolean } = {}): Managed {
  const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env ?? process.env, stdio: [opts.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err = (err + d).slice(-STDERR_KEPT_CHARS)));
  const exited = new Promise<number | null>((resolve) => {
    child.on('error', () => resolve(-1));
    child.on('exit', (code) => resolve(code));
  });
  const managed: Managed = { name, child, stdout: () => out, stderr: () => err, exited };
  live.add(managed);
  void exited.then(() => live.delete(managed));
  return managed;
}

/** Whether a process exists (one of another user's counts: the kernel says EPERM, not ESRCH). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * A temporary folder for the files of a server this process runs (Traffic Server's,
 * nginx's), named `<prefix><this pid>-<random>` so that removeStaleFolders() can tell
 * when its owner is gone.
 */
export function ownedTempFolder(prefix: string, dir = tmpdir()): string {
  return mkdtempSync(join(dir, `${prefix}${process.pid}-`));
}

/**
 * Removes the ownedTempFolder()s of `prefix` whose owner died without cleaning up
 * (SIGKILL): each folder's name carries its owner's pid. Folders of other users are
 * left alone. Returns the names removed.
 */
export function removeStaleFolders(prefix: string, dir = tmpdir()): string[] {
  const removed: string[] = [];
  // Prefixes are plain words (`sammy-edge-`): nothing in them to escape.
  const owned = new RegExp(`^${prefix}(\\d+)-`);
  for (const name of readdirSync(dir)) {
    const m = owned.exec(name);
    if (m === null || pidAlive(Number(m[1]))) continue;
    try {
      rmSync(join(dir, name), { recursive: true });
      removed.push(name);
    } catch {
      // another user's, or already gone
    }
  }
  return removed;
}

/** A free TCP port on `host` now (for servers that cannot bind port 0 and say which they got: Traffic Server, nginx). */
export function freePort(host: string): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, host, () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolvePort(port));
    });
  });
}

/** The address a local client reaches a server bound to `host` at (not the wildcard addresses). */
export function reachableHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::') return '::1';
  return host;
}

/**
 * The status of a GET of `path` on host:port now, or null when nothing answers within
 * `timeoutMs`. With `tls`, over HTTPS without checking the certificate (a readiness
 * probe of a server this process started, not a client that trusts it).
 */
export function httpStatus(o: { host: string; port: number; path: string; tls?: boolean; timeoutMs?: number }): Promise<number | null> {
  return new Promise((done) => {
    const options = { host: o.host, port: o.port, path: o.path, agent: false as const, timeout: o.timeoutMs ?? 1000 };
    const onResponse = (res: http.IncomingMessage): void => {
      res.resume();
      done(res.statusCode ?? null);
    };
    const req = o.tls ? https.get({ ...options, rejectUnauthorized: false }, onResponse) : http.get(options, onResponse);
    req.on('timeout', () => req.destroy());
    req.on('error', () => done(null));
  });
}

/**
 * Polls `ready` every 50 ms while `p` runs: 'ready' once it holds, 'exited' if the
 * process ends first, 'timeout' after `timeoutMs` (the caller stops the process and
 * says why, with what the process left behind).
 */
export async function waitUntilReady(
  p: Managed,
  ready: () => Promise<boolean>,
  timeoutMs: number,
): Promise<'ready' | 'exited' | 'timeout'> {
  const deadline = Date.now() + timeoutMs;
  let gone = false;
  void p.exited.then(() => (gone = true));
  while (!(await ready())) {
    if (gone) return 'exited';
    if (Date.now() > deadline) return 'timeout';
    await sleep(50);
  }
  return 'ready';
}

/** Waits until the process prints `text` (on stdout by default); throws a ProcessError if it exits or times out first. */
export async function waitForOutput(p: Managed, text: string | RegExp, timeoutMs = 20_000, stream: 'stdout' | 'stderr' = 'stdout'): Promise<void> {
  const output = stream === 'stdout' ? p.stdout : p.stderr;
  const seen = () => (typeof text === 'string' ? output().includes(text) : text.test(output()));
  const deadline = Date.now() + timeoutMs;
  let gone = false;
  void p.exited.then(() => (gone = true));
  while (!seen()) {
    if (gone) throw new ProcessError('SAMMY_PROCESS_EXITED', `${p.name} exited before printing ${String(text)}: ${p.stderr().trim()}`);
    if (Date.now() > deadline) throw new ProcessError('SAMMY_PROCESS_TIMEOUT', `${p.name} did not print ${String(text)} within ${timeoutMs} ms: ${p.stderr().trim()}`);
    await sleep(20);
  }
}

/** `signal` (SIGTERM by default), then SIGKILL after `graceMs`; resolves with the exit code once the process has exited. */
export async function stop(p: Managed, opts: { graceMs?: number; signal?: NodeJS.Signals } = {}): Promise<number | null> {
  if (p.child.exitCode === null && p.child.signalCode === null) {
    p.child.kill(opts.signal ?? 'SIGTERM');
    const timer = setTimeout(() => p.child.kill('SIGKILL'), opts.graceMs ?? 3000);
    await p.exited;
    clearTimeout(timer);
  }
  return p.exited;
}

/** The direct children of a process (a `--workers N` server's workers, nginx's workers); none once it is gone. Linux only. */
export function childPids(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** A server a command line runs in its foreground (the edge's Traffic Server, nginx) and removes when it stops. */
export interface ForegroundServer {
  process: Managed;
  stop(): Promise<unknown>;
}

/**
 * Keeps `server` in this command's foreground: SIGINT and SIGTERM stop it (exit code
 * 0); if it exits by itself it is stopped all the same (its folder removed) and
 * `name: what exited unexpectedly (code): why()` goes to stderr (1). The signal
 * handlers are in place before `announce` runs (it prints the listening line).
 */
export async function holdInForeground(o: {
  name: string;
  what: string;
  server: ForegroundServer;
  announce: () => void;
  why: () => string;
}): Promise<number> {
  let stopping: Promise<number> | null = null;
  const shutdown = (): Promise<number> => (stopping ??= o.server.stop().then(() => 0));
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void shutdown().then((code) => process.exit(code)));
  o.announce();
  const code = await o.server.process.exited;
  if (stopping !== null) return stopping;
  const why = o.why();
  await o.server.stop();
  process.stderr.write(`${o.name}: ${o.what} exited unexpectedly (${code}): ${why}\n`);
  return 1;
}

/** Runs a command line's `main` and exits with its code; a throw exits 2 with one line `name: CODE: message` on stderr. */
export function runCommandLine(name: string, main: () => Promise<number>, fallbackCode: string): void {
  main().then(
    (code) => process.exit(code),
    (err: unknown) => {
      console.error(`${name}: ${(err as { code?: string }).code ?? fallbackCode}: ${(err as Error).message}`);
      process.exit(2);
    },
  );
}

/** Stops every process started here that is still running. */
export async function stopAll(): Promise<void> {
  await Promise.all([...live].map((p) => stop(p)));
}

/** SIGKILL to every process started here that is still running (for a synchronous exit handler). */
export function killAll(): void {
  for (const p of live) p.child.kill('SIGKILL');
}

export interface ServerProcess {
  /** `http://HOST:PORT` (or `https://`) as the server printed it. */
  url: string;
  port: number;
  process: Managed;
}

/**
 * Starts `npm run serve` with `args` (through `wrap`, e.g. inside a network namespace)
 * and waits for its `listening on` line. `cli` starts another entry that keeps the same
 * contract instead (the edge's, `EDGE_CLI` in `@sammy/edge/edge`).
 */
export async function startServer(o: {
  name?: string;
  args: string[];
  cli?: string;
  cwd?: string;
  /** Rewrites the command, e.g. to `ip netns exec NS ...`. */
  wrap?: (cmd: string, args: string[]) => [string, string[]];
  timeoutMs?: number;
}): Promise<ServerProcess> {
  const node: [string, string[]] = [process.execPath, ['--import', 'tsx', o.cli ?? SERVER_CLI, ...o.args]];
  const [cmd, args] = o.wrap ? o.wrap(...node) : node;
  const p = start(o.name ?? 'server', cmd, args, o.cwd === undefined ? {} : { cwd: o.cwd });
  await waitForOutput(p, LISTENING_LINE, o.timeoutMs ?? 30_000);
  const { url, port } = parseListeningLine(p.stdout())!;
  return { url, port, process: p };
}
