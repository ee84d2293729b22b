/**
 * Teardown on every exit path. The runner registers what it builds (the topology,
 * the browser); a normal end, an exception, SIGINT and SIGTERM all run the same
 * tasks, and every process the lab started is stopped by pid (processes.ts).
 */
import { existsSync, readFileSync } from 'node:fs';
import { stopAll } from './processes.js';

const tasks = new Set<() => Promise<unknown>>();

/** Registers a teardown task; the returned function unregisters it (after running it yourself). */
export function deferCleanup(task: () => Promise<unknown>): () => void {
  tasks.add(task);
  return () => tasks.delete(task);
}

/** Stops every child process, then runs the registered tasks (newest first). */
export async function runCleanups(): Promise<void> {
  await stopAll();
  for (const task of [...tasks].reverse()) {
    tasks.delete(task);
    try {
      await task();
    } catch (err) {
      process.stderr.write(`lab: cleanup step failed: ${(err as Error).message}\n`);
    }
  }
}

/** The `npm ...` processes among our ancestors (npm's process title starts with "npm "). */
export function npmAncestors(pid = process.ppid): number[] {
  const out: number[] = [];
  for (let p = pid; p > 1; ) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${p}/stat`, 'utf8');
    } catch {
      break;
    }
    const cmdline = readFileSync(`/proc/${p}/cmdline`, 'utf8');
    if (cmdline.startsWith('npm ') || cmdline.startsWith('npm\0')) out.push(p);
    p = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  }
  return out;
}

/**
 * On SIGINT/SIGTERM/SIGHUP: clean up, then exit 128 + signal number. npm 11 does not
 * pass a SIGTERM on to the script it runs (it exits and leaves the script running),
 * so the death of an npm ancestor counts as a SIGTERM too.
 */
export function exitCleanlyOnSignals(log: (line: string) => void): void {
  const codes = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 } as const;
  let cleaning = false;
  const stopWith = (reason: string, code: number) => {
    if (cleaning) return;
    cleaning = true;
    log(`${reason}: stopping the lab and removing its namespaces...`);
    void runCleanups().finally(() => process.exit(code));
  };
  for (const signal of Object.keys(codes) as Array<keyof typeof codes>) process.on(signal, () => stopWith(signal, codes[signal]));
  const npm = npmAncestors();
  if (npm.length > 0) {
    setInterval(() => {
      const gone = npm.find((pid) => !existsSync(`/proc/${pid}`));
      if (gone !== undefined) stopWith(`npm (pid ${gone}) exited`, codes.SIGTERM);
    }, 500).unref();
  }
}
