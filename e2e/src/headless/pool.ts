/**
 * The lab's side of the headless player: one process (`worker.ts`) inside a network
 * namespace, and sessions in it that look like the browser's (`RunningSession` of
 * `src/lab/session.ts`), so the runner drives either kind the same way.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Arm, SammyConfig } from '@sammy/player/abr';
import type { SimArm } from '@sammy/sim/arms';
import { E2E_DIR, REPO_DIR } from '../paths.js';
import { LabError } from '../lab-error.js';
import { start, stop, waitForOutput, type Managed } from '../lab/processes.js';
import type { SessionResult } from '../analysis/records.js';
import type { RunningSession } from '../lab/session.js';
import type { WorkerCommand, WorkerEvent } from './protocol.js';
import type { HeadlessResult } from './session.js';

export interface HeadlessSessionOptions {
  id: string;
  baseUrl: string;
  arm: SimArm;
  device: string;
  resetHistory: boolean;
  config: Partial<SammyConfig>;
  startupTimeoutS: number;
  /** Fetch the player page and its assets first, as the lab's browser sessions do (empty cache); false: a viewer whose player is cached. */
  loadPage: boolean;
}

/** A headless session's result: the browser's, with the local ports of its connections. */
export type HeadlessSessionResult = SessionResult & Pick<HeadlessResult, 'localPorts' | 'abandonedBytes'>;

/** A running headless session: a `RunningSession` whose result also names its connections' ports. */
export interface RunningHeadlessSession extends RunningSession {
  finish(): Promise<HeadlessSessionResult>;
}

export interface HeadlessPool {
  startSession(o: HeadlessSessionOptions): Promise<RunningHeadlessSession>;
  /** The player process's CPU time so far (user + system, from /proc), its age, and the sessions it ran. */
  usage(): { cpuS: number | null; wallS: number; sessions: number };
  close(): Promise<void>;
}

/** utime + stime of a process, in seconds (/proc/PID/stat fields 14 and 15, in clock ticks of 1/100 s on Linux). */
export function processCpuS(statText: string, ticksPerS = 100): number | null {
  const fields = statText.slice(statText.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return Number.isFinite(utime) && Number.isFinite(stime) ? (utime + stime) / ticksPerS : null;
}

interface Waiter {
  started?: (originMs: number) => void;
  playing?: (atMs: number) => void;
  result?: (r: HeadlessResult) => void;
  startupError?: (message: string) => void;
  error?: (message: string) => void;
}

/** Starts the player process; `wrap` runs it elsewhere (e.g. `ip netns exec <client ns>`). */
export async function startHeadlessPool(wrap: (cmd: string, args: string[]) => [string, string[]] = (c, a) => [c, a]): Promise<HeadlessPool> {
  const [cmd, args] = wrap(process.execPath, ['--import', 'tsx', join(E2E_DIR, 'src', 'headless', 'worker.ts')]);
  const proc: Managed = start('headless players', cmd, args, { cwd: REPO_DIR, stdin: true });
  const startedMs = Date.now();
  let sessions = 0;
  await waitForOutput(proc, '{"ev":"ready"}\n', 30_000);
  const waiters = new Map<string, Waiter>();
  let pending = '';
  proc.child.stdout!.on('data', (d: string) => {
    pending += d;
    let nl: number;
    while ((nl = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      let e: WorkerEvent;
      try {
        e = JSON.parse(line) as WorkerEvent;
      } catch {
        continue;
      }
      if (e.ev === 'ready') continue;
      const w = e.id === null ? undefined : waiters.get(e.id);
      if (!w) continue;
      if (e.ev === 'started') w.started?.(e.originMs);
      else if (e.ev === 'playing') w.playing?.(e.atMs);
      else if (e.ev === 'result') w.result?.(e.result);
      else if (e.ev === 'error') (e.stage === 'startup' ? w.startupError : w.error)?.(e.message);
    }
  });
  // A player process that dies leaves no session waiting for ever: each is told why.
  void proc.exited.then((code) => {
    const why = `the headless player process exited (${code}): ${proc.stderr().trim().slice(-500)}`;
    for (const w of waiters.values()) {
      w.startupError?.(why);
      w.error?.(why);
    }
  });
  const send = (c: WorkerCommand) => {
    if (proc.child.exitCode !== null) throw new LabError('LAB_HEADLESS_GONE', `the headless player process exited (${proc.child.exitCode}): ${proc.stderr().trim().slice(-500)}`);
    proc.child.stdin!.write(`${JSON.stringify(c)}\n`);
  };
  return {
    usage() {
      let cpuS: number | null = null;
      try {
        cpuS = processCpuS(readFileSync(`/proc/${proc.child.pid}/stat`, 'utf8'));
      } catch {
        cpuS = null;
      }
      return { cpuS, wallS: (Date.now() - startedMs) / 1000, sessions };
    },
    async startSession(o) {
      sessions += 1;
      const w: Waiter = {};
      waiters.set(o.id, w);
      let startupError: string | null = null;
      const playbackStart = new Promise<number>((resolve, reject) => {
        w.playing = resolve;
        w.startupError = (m) => {
          startupError = m;
          reject(new LabError('LAB_HEADLESS_SESSION', `headless ${o.arm} session ${o.id}: ${m}`));
        };
      });
      playbackStart.catch(() => {});
      const originMs = await new Promise<number>((resolve, reject) => {
        w.started = resolve;
        w.error = (m) => reject(new LabError('LAB_HEADLESS_SESSION', `headless ${o.arm} session ${o.id} did not start: ${m}`));
        send({ op: 'start', id: o.id, device: o.device, resetHistory: o.resetHistory, baseUrl: o.baseUrl, arm: o.arm, config: o.config, startupTimeoutS: o.startupTimeoutS, loadPage: o.loadPage });
      });
      return {
        originMs,
        playbackStart,
        finish: () =>
          new Promise<HeadlessSessionResult>((resolve, reject) => {
            w.result = (r) => {
              waiters.delete(o.id);
              const errors = startupError && !r.pageErrors.includes(startupError) ? [...r.pageErrors, startupError] : r.pageErrors;
              resolve({ ...r, arm: r.arm as Arm, pageErrors: errors });
            };
            w.error = (m) => {
              waiters.delete(o.id);
              reject(new LabError('LAB_HEADLESS_SESSION', `headless ${o.arm} session ${o.id}: ${m}`));
            };
            send({ op: 'finish', id: o.id });
          }),
      };
    },
    async close() {
      proc.child.stdin?.end();
      await stop(proc);
    },
  };
}
