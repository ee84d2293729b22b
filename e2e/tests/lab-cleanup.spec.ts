/**
 * A lab run killed half-way (SIGINT, SIGTERM) leaves no namespace, TUN device,
 * qdisc or process behind.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { listNamespaces, ownerPid } from '../src/lab/netns.js';
import { pidAlive } from '../src/lab/processes.js';
import { E2E_DIR, REPO_DIR } from '../src/paths.js';
import { labUnavailableReason, playerUnavailableReason } from '../src/lab/runner.js';

const reason = labUnavailableReason() ?? playerUnavailableReason();

/** The pids whose parent chain leads to `root`. */
function descendants(root: number): number[] {
  const parent = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parent.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // exited meanwhile
    }
  }
  const out: number[] = [];
  const walk = (pid: number) => {
    for (const [child, ppid] of parent) if (ppid === pid) (out.push(child), walk(child));
  };
  walk(root);
  return out;
}

function netnsPids(ns: string): number[] {
  return execFileSync('ip', ['netns', 'pids', ns], { encoding: 'utf8' }).split('\n').filter(Boolean).map(Number);
}

function alive(pid: number): boolean {
  if (!pidAlive(pid)) return false;
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8')); // zombies are gone, just not reaped
  } catch {
    return false;
  }
}

const CASES = [
  { name: 'SIGINT to the lab (Ctrl-C)', signal: 'SIGINT', viaNpm: false, code: 130 },
  { name: 'SIGTERM to the lab', signal: 'SIGTERM', viaNpm: false, code: 143 },
  // npm exits on SIGTERM without passing it on; the lab notices its npm is gone.
  { name: 'SIGTERM to `npm run lab`', signal: 'SIGTERM', viaNpm: true, code: 143 },
] as const;

async function waitUntil(check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 200));
  }
  return check();
}

for (const c of CASES) {
  test(`a lab run killed half-way with ${c.name} leaves nothing behind`, async () => {
    if (reason) console.log(`SKIP: ${reason}`);
    test.skip(reason !== null, reason ?? '');
    test.setTimeout(5 * 60_000);
    const outDir = mkdtempSync(join(tmpdir(), 'sammy-lab-kill-'));
    const labArgs = ['--scenario', 'ci-short', '--arms', 'sammy', '--neighbours', 'udp', '--trials', '1', '--out', outDir];
    const [cmd, args] = c.viaNpm ? ['npm', ['run', 'lab', '--', ...labArgs]] : [process.execPath, ['--import', 'tsx', join(E2E_DIR, 'src', 'lab', 'cli.ts'), ...labArgs]];
    const child = spawn(cmd, args, { cwd: REPO_DIR, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    // Half-way: the session plays, beside its UDP neighbour.
    const reached = await waitUntil(() => /playing after/.test(out) || child.exitCode !== null, 4 * 60_000);
    expect(reached && child.exitCode === null, `the run never reached playback:\n${out}`).toBe(true);
    await new Promise((r) => setTimeout(r, 3000));
    const tree = [child.pid!, ...descendants(child.pid!)];
    const ours = (await listNamespaces()).filter((n) => tree.includes(ownerPid(n) ?? -1));
    expect(ours).toHaveLength(3);
    const router = ours.find((n) => n.endsWith('-rtr'))!;
    expect(execFileSync('ip', ['-n', router, '-o', 'link', 'show'], { encoding: 'utf8' })).toMatch(/dl-down.*dl-up|dl-up.*dl-down/s);
    expect(execFileSync('tc', ['-n', router, 'qdisc', 'show'], { encoding: 'utf8' })).toContain('qdisc tbf');
    const pids = [...new Set([...tree, ...ours.flatMap(netnsPids)])];
    // The lab, the video server, Chromium, the delay line, the UDP source and sink at least.
    expect(pids.length).toBeGreaterThanOrEqual(6);

    child.kill(c.signal);
    const code = await exited;
    if (!c.viaNpm) expect(code, out).toBe(c.code);
    expect(await waitUntil(() => pids.filter(alive).length === 0, 20_000), `still running: ${pids.filter(alive).join(' ')}\n${out}`).toBe(true);
    expect((await listNamespaces()).filter((n) => ours.includes(n))).toEqual([]);
    // The TUN devices and the qdiscs lived in the router namespace, now gone; none leaked into the root namespace.
    expect(execFileSync('ip', ['-o', 'link', 'show'], { encoding: 'utf8' })).not.toMatch(/\b(dl-down|dl-up)\b/);
  });
}
