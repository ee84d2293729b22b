/**
 * Teardown on every exit path. The runner registers what it builds (the topology,
 * the browser); a normal end, an exception, SIGINT and SIGTERM all run the same
 * tasks, and every process the lab started is stopped by pid (processes.ts).
 */
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

/** On SIGINT/SIGTERM/SIGHUP: clean up, then exit 128 + signal number. */
export function exitCleanlyOnSignals(log: (line: string) => void): void {
  const codes = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 } as const;
  let cleaning = false;
  for (const signal of Object.keys(codes) as Array<keyof typeof codes>) {
    process.on(signal, () => {
      if (cleaning) return;
      cleaning = true;
      log(`${signal}: stopping the lab and removing its namespaces...`);
      void runCleanups().finally(() => process.exit(codes[signal]));
    });
  }
}
