/**
 * Child processes of a lab run. Every process the lab starts is registered here so
 * that teardown (normal end, exception, SIGINT, SIGTERM) can stop each one by pid.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { LabError } from '../lab-error.js';

const execFileAsync = promisify(execFile);

/** Runs a command to completion (in `cwd`, else here); throws a LabError naming the command and its stderr. */
export async function run(cmd: string, args: string[], opts: { allowFail?: boolean; timeoutMs?: number; cwd?: string } = {}): Promise<string> {
  try {
    const { stdout } = await execFileAsync(cmd, args, { timeout: opts.timeoutMs ?? 30_000, maxBuffer: 64 * 1024 * 1024, cwd: opts.cwd });
    return stdout;
  } catch (err) {
    if (opts.allowFail) return '';
    const e = err as { stderr?: string; message: string };
    throw new LabError('LAB_COMMAND_FAILED', `${cmd} ${args.join(' ')} failed: ${(e.stderr ?? '').trim() || e.message}`);
  }
}

// Starting, waiting for and stopping processes is shared with the server bench and the
// tests; every process started through it is stopped by `stopAll()` at teardown.
export { pidAlive, ProcessError, sleep, start, stop, stopAll, waitForOutput, type Managed } from '@sammy/server/process';
