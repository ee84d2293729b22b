// Node 24, the current LTS, for `npm test`'s second unit-test pass (the first runs on the
// node that runs `npm test`, Node 20 on CI). Fetched once from the npm registry, where each
// Node release is published as `node-linux-<arch>` (the official binary in bin/node), into
// node_modules/.cache (so `npm ci` starts again from nothing, as CI does). Plain Node.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ROOT, say } from './setup.mjs';

export const NODE24_MAJOR = 24;
const CACHE_DIR = join(ROOT, 'node_modules', '.cache', `sammy-node${NODE24_MAJOR}`);

/**
 * The unit tests that run again on Node 24: each package's own `test` script with `node`
 * meaning Node 24, and extra jest arguments. Every jest suite passed on Node 24 when run by
 * hand (README "Tests"); running them all again would add about 9 minutes to CI's 20, so
 * this pass keeps what Node itself can change, in 2 to 3 minutes on a 2-core machine:
 * - player (its build too), sim, encoder, native: whole. Pure code on V8 (the ABR core, the
 *   simulator's numbers on 17 traces), the build with esbuild, child processes (ffmpeg, the
 *   ASan C core against the server's code).
 * - server, default body path: the pure suites, and those on what the server takes from
 *   Node beyond its documented API or that Node's HTTP parser decides: a socket's file
 *   descriptor and write queue (socket._handle), koffi's calls into libc (setsockopt,
 *   TCP_INFO, the sendfile thread), Node's idle timer during zero-copy sends, HTTP
 *   semantics and hostile requests, and the command line under tsx. Left out: the suites
 *   that measure pacing rates against the clock (pacing, tls, node-floor, spiral-guard,
 *   carryover, pipelining, workers, vanishing clients, the stream body path's repeats):
 *   they measure the kernel's pacing, take most of the server's 4 minutes, and on a loaded
 *   machine their "unpaced is 10x faster" checks miss on Node 20 and 24 alike.
 * - e2e: the headless player (its HTTP client and playback model against a real server,
 *   2 s); not the lab's suites (2 minutes, mostly writing report files).
 * - Not edge or nginx: their Traffic Server and nginx are C; Node only starts them and
 *   serves the origin.
 */
const SERVER_SUITES = [
  'bench-connections', 'burst', 'cmcd', 'cpu-ratios', 'file-head', 'options', 'tail', 'trains', 'tls-ratios',
  'tcpinfo', 'body-sender', 'zero-copy', 'media', 'hostile/hardening', 'cli', 'process',
];
export const NODE24_UNIT_TESTS = [
  { workspace: 'player', jestArgs: [] },
  { workspace: 'sim', jestArgs: [] },
  { workspace: 'encoder', jestArgs: [] },
  { workspace: 'native', jestArgs: [] },
  {
    workspace: 'server',
    jestArgs: [...SERVER_SUITES.map((name) => `test/${name}\\.test\\.ts$`), '--selectProjects', 'default body path'],
  },
  { workspace: 'e2e', jestArgs: ['test/headless/'] },
];

/** `node --version` of a binary, or null when it does not run. */
function versionOf(bin) {
  const res = spawnSync(bin, ['--version'], { encoding: 'utf8' });
  return res.status === 0 ? res.stdout.trim() : null;
}

function cachedNode() {
  if (!existsSync(CACHE_DIR)) return null;
  for (const name of readdirSync(CACHE_DIR)) {
    const bin = join(CACHE_DIR, name, 'bin', 'node');
    if (existsSync(bin) && versionOf(bin)?.startsWith(`v${NODE24_MAJOR}.`)) return bin;
  }
  return null;
}

/**
 * The path of a Node 24 binary, fetched with `npm pack` the first time; or `{ error }`
 * saying why there is none (no such package for this platform, the registry unreachable,
 * a binary that does not run).
 */
export function ensureNode24() {
  const cached = cachedNode();
  if (cached !== null) return { bin: cached };
  if (process.platform !== 'linux' || !['x64', 'arm64'].includes(process.arch)) {
    return { error: `no node-${process.platform}-${process.arch} package to fetch Node ${NODE24_MAJOR} from (Linux x64 and arm64 only)` };
  }
  const pkg = `node-linux-${process.arch}@${NODE24_MAJOR}`;
  say(`fetching Node ${NODE24_MAJOR} (${pkg}, about 50 MB) from the npm registry into ${CACHE_DIR} (once)...`);
  mkdirSync(CACHE_DIR, { recursive: true });
  const work = mkdtempSync(join(CACHE_DIR, '.fetch-'));
  try {
    // Bounded, so an unreachable registry fails within minutes rather than npm's default hour of retries.
    const pack = spawnSync('npm', ['pack', pkg, '--pack-destination', work, '--json', '--fetch-retries=1', '--fetch-timeout=120000'], { cwd: work, encoding: 'utf8' });
    if (pack.status !== 0) {
      const reason = `${pack.stderr}${pack.stdout}`.split('\n').find((l) => /npm (error|ERR!) (code|network|errno)/.test(l)) ?? pack.error?.message ?? `exit code ${pack.status}`;
      return { error: `npm pack ${pkg} failed, is the npm registry reachable? (${reason.trim()})` };
    }
    const [{ filename, version }] = JSON.parse(pack.stdout);
    const unpacked = join(work, 'unpacked');
    mkdirSync(unpacked);
    const tar = spawnSync('tar', ['xzf', join(work, filename), '-C', unpacked, '--strip-components=1', 'package/bin/node', 'package/LICENSE'], { encoding: 'utf8' });
    if (tar.status !== 0) return { error: `cannot unpack ${filename}: ${tar.stderr.trim() || tar.error?.message}` };
    const bin = join(unpacked, 'bin', 'node');
    const ran = versionOf(bin);
    if (!ran?.startsWith(`v${NODE24_MAJOR}.`)) return { error: `${pkg} ${version}: bin/node ${ran === null ? 'does not run here' : `says ${ran}`}` };
    const dest = join(CACHE_DIR, `node-v${version}`);
    rmSync(dest, { recursive: true, force: true });
    renameSync(unpacked, dest);
    say(`Node ${ran} is in ${dest}`);
    return { bin: join(dest, 'bin', 'node') };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** This process's environment with `bin`'s folder first on PATH: npm, package scripts and tsx then run on that node. */
export function envWithNode(bin) {
  return { ...process.env, PATH: `${dirname(bin)}:${process.env.PATH ?? ''}` };
}
