/** config.code: the commit a lab run ran from, and how far the checkout differed from it (a real git, in a temporary folder). */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { codeVersion } from '../../src/lab/code-version.js';
import { codeText } from '../../src/analysis/report.js';

const git = (dir: string, ...args: string[]) => {
  const r = spawnSync('git', ['-C', dir, '-c', 'user.name=lab test', '-c', 'user.email=lab@test.invalid', ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
};

describe('codeVersion', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'sammy-lab-code-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  test('a checkout at a commit, then with a changed and an untracked file', async () => {
    git(dir, 'init', '-q');
    writeFileSync(join(dir, 'a.txt'), 'one');
    git(dir, 'add', 'a.txt');
    git(dir, 'commit', '-q', '-m', 'first');
    const head = git(dir, 'rev-parse', 'HEAD');
    expect(await codeVersion(dir)).toEqual({ commit: head, changedFiles: 0 });
    expect(codeText(await codeVersion(dir))).toBe(`commit ${head.slice(0, 12)}`);
    writeFileSync(join(dir, 'a.txt'), 'two');
    writeFileSync(join(dir, 'b.txt'), 'new');
    expect(await codeVersion(dir)).toEqual({ commit: head, changedFiles: 2 });
    expect(codeText(await codeVersion(dir))).toBe(`commit ${head.slice(0, 12)} with 2 file(s) changed from it`);
  });

  test('a folder that is no git checkout, or a repository without a commit: nothing recorded', async () => {
    expect(await codeVersion(dir)).toEqual({ commit: null, changedFiles: null });
    git(dir, 'init', '-q');
    expect(await codeVersion(dir)).toEqual({ commit: null, changedFiles: null });
    expect(codeText(await codeVersion(dir))).toBe('not from a git checkout');
  });
});
