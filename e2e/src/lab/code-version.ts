/**
 * Which code a lab run ran: the checkout's commit and how many files differed from it,
 * recorded in result.json (`config.code`) so a result can be traced to its source.
 * Outside a git checkout, or without git, both are null.
 */
import { spawnSync } from 'node:child_process';

export interface CodeVersion {
  /** `git rev-parse HEAD` of the checkout the lab ran from. */
  commit: string | null;
  /** Files `git status --porcelain` listed (changed, added, untracked): 0 is the commit as it is. */
  changedFiles: number | null;
}

export function codeVersion(dir: string): CodeVersion {
  const git = (args: string[]): string | null => {
    const r = spawnSync('git', ['-C', dir, ...args], { encoding: 'utf8', timeout: 10_000 });
    return r.status === 0 ? r.stdout : null;
  };
  const head = git(['rev-parse', 'HEAD'])?.trim() ?? null;
  if (head === null || !/^[0-9a-f]{40}$/.test(head)) return { commit: null, changedFiles: null };
  const status = git(['status', '--porcelain']);
  return { commit: head, changedFiles: status === null ? null : status.split('\n').filter((l) => l.trim() !== '').length };
}
