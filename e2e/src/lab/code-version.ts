/**
 * Which code a lab run ran: the checkout's commit and how many files differed from it,
 * recorded in result.json (`config.code`) so a result can be traced to its source.
 * Outside a git checkout, or without git, both are null.
 */
import type { CodeVersion } from '../analysis/records.js';
import { run } from './processes.js';

export async function codeVersion(dir: string): Promise<CodeVersion> {
  const git = (args: string[]) => run('git', ['-C', dir, ...args], { allowFail: true, timeoutMs: 10_000 });
  const head = (await git(['rev-parse', 'HEAD'])).trim();
  if (!/^[0-9a-f]{40}$/.test(head)) return { commit: null, changedFiles: null };
  const status = await git(['status', '--porcelain']);
  return { commit: head, changedFiles: status.split('\n').filter((l) => l.trim() !== '').length };
}
