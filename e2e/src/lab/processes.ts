/**
 * Child processes of a lab run. Every process the lab starts is registered here so
 * that teardown (normal end, exception, SIGINT, SIGTERM) can stop each one by pid.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

export class LabError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'LabError';
  }
}

/** Runs a command to completion; throws a LabError naming the command and its stderr. */
export async function run(cmd: string, args: string[], opts: { allowFail?: boolean; timeoutMs?: number } = {}): Promise<string> {
  try {
    const { stdout } = await execFileAsync(cmd, args, { timeout: opts.timeoutMs ?? 30_000, maxBuffer: 64 * 1024 * 1024 });
    return stdout;
  } catch (err) {
    if (opts.allowFail) return '';
    const e = err as { stderr?: string; message: string };
    throw new LabError('LAB_COMMAND_FAILED', `${cmd} ${args.join(' ')} failed: ${(e.stderr ?? '').trim() || e.message}`);
  }
}

/** A started child with its whole stdout kept (the tools print their results there). */
export interface Managed {
  name: string;
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** Resolves with the exit code (null when killed by a signal). */
  exited: Promise<number | null>;
}

const live = new Set<Managed>();

export function start(name: string, cmd: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Managed {
  const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err = (err + d).slice(-20_000)));
  const exited = new Promise<number | null>((resolve) => {
    child.on('error', () => resolve(-1));
    child.on('exit', (code) => resolve(code));
  });
  const managed: Managed = { name, child, stdout: () => out, stderr: () => err, exited };
  live.add(managed);
  void exited.then(() => live.delete(managed));
  return managed;
}

/** Waits until the process prints `text` on stdout; throws if it exits or times out first. */
export async function waitForOutput(p: Managed, text: string | RegExp, timeoutMs = 20_000): Promise<void> {
  const seen = () => (typeof text === 'string' ? p.stdout().includes(text) : text.test(p.stdout()));
  const deadline = Date.now() + timeoutMs;
  let gone = false;
  void p.exited.then(() => (gone = true));
  while (!seen()) {
    if (gone) throw new LabError('LAB_PROCESS_EXITED', `${p.name} exited before printing ${String(text)}: ${p.stderr().trim()}`);
    if (Date.now() > deadline) throw new LabError('LAB_PROCESS_TIMEOUT', `${p.name} did not print ${String(text)} within ${timeoutMs} ms: ${p.stderr().trim()}`);
    await sleep(20);
  }
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves once the process has exited. */
export async function stop(p: Managed, graceMs = 3000): Promise<number | null> {
  if (p.child.exitCode === null && p.child.signalCode === null) {
    p.child.kill('SIGTERM');
    const timer = setTimeout(() => p.child.kill('SIGKILL'), graceMs);
    await p.exited;
    clearTimeout(timer);
  }
  return p.exited;
}

export async function stopAll(): Promise<void> {
  await Promise.all([...live].map((p) => stop(p)));
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
