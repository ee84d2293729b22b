// Installs what `npm start` and `npm test` need on a fresh Debian/Ubuntu machine, or
// says exactly what to install. Plain Node (no dependencies): it runs before `npm ci`.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Debian package -> a command it provides (or an absolute file it installs), to tell whether it is installed. */
export const APT_PACKAGES = {
  ffmpeg: 'ffmpeg',
  chromium: 'chromium',
  iproute2: 'ip',
  tcpdump: 'tcpdump',
  'iputils-ping': 'ping',
  gcc: 'gcc',
  'libc6-dev': '/usr/include/stdio.h',
  'nginx-light': 'nginx',
  openssl: 'openssl',
  trafficserver: 'traffic_server',
  'trafficserver-dev': '/usr/include/ts/ts.h',
  'nginx-core': 'nginx',
  'nginx-dev': '/usr/share/nginx/src/configure',
  make: 'make',
};

/** What the edge (`npm run edge`, its tests and bench) needs from Debian. */
export const EDGE_APT_PACKAGES = ['trafficserver', 'trafficserver-dev', 'gcc', 'libc6-dev'];

/** What nginx with the Sammy module (`npm run nginx`, its tests) needs from Debian: nginx, its source tree, a compiler and make. */
export const NGINX_APT_PACKAGES = ['nginx-core', 'nginx-dev', 'gcc', 'libc6-dev', 'make'];

/**
 * Services apt starts when it installs a package that Sammy only uses as a program:
 * the edge runs its own Traffic Server and `npm run nginx` its own nginx, each from a
 * temporary folder; Debian's would hold port 8080 (Traffic Server, the port `npm start`
 * serves on) and port 80 (nginx).
 */
const APT_SERVICES_NOT_WANTED = { trafficserver: 'trafficserver', 'nginx-core': 'nginx' };

function stopServicesStartedBy(installed) {
  if (!existsSync('/run/systemd/system') || !hasCommand('systemctl')) return;
  for (const pkg of installed) {
    const service = APT_SERVICES_NOT_WANTED[pkg];
    if (service === undefined) continue;
    say(`stopping and disabling the ${service} service apt started with ${pkg} (sammy runs its own instances)`);
    run('systemctl', ['disable', '--now', service]);
  }
}

function aptPackageInstalled(pkg) {
  const probe = APT_PACKAGES[pkg] ?? pkg;
  return probe.startsWith('/') ? existsSync(probe) : hasCommand(probe);
}

export function say(line) {
  process.stderr.write(`sammy: ${line}\n`);
}

export function run(cmd, args, opts = {}) {
  const res = spawnSync(cmd, args, { stdio: 'inherit', cwd: ROOT, ...opts });
  if (res.error) throw res.error;
  return res.status ?? 1;
}

export function hasCommand(cmd) {
  const res = spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' });
  return res.status === 0;
}

export function isRoot() {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

export function checkNodeVersion() {
  const [major, minor] = process.versions.node.split('.').map(Number);
  if (major < 20 || (major === 20 && minor < 19)) {
    say(`Node ${process.versions.node} is too old: Sammy needs Node >= 20.19 (https://nodejs.org or your distribution's nodejs package).`);
    process.exit(1);
  }
}

/** Runs `npm ci` when node_modules is missing or older than package-lock.json. */
export function ensureNpmDependencies() {
  const marker = join(ROOT, 'node_modules', '.package-lock.json');
  const lock = join(ROOT, 'package-lock.json');
  if (existsSync(marker) && statSync(marker).mtimeMs >= statSync(lock).mtimeMs) return;
  say('installing npm dependencies (npm ci)...');
  if (run('npm', ['ci', '--no-audit', '--no-fund']) !== 0) {
    say('npm ci failed; see the output above.');
    process.exit(1);
  }
}

/**
 * Installs the missing Debian packages with apt-get when running as root on a
 * Debian-like system; otherwise prints the exact command. Returns the packages
 * still missing afterwards.
 */
export function ensureAptPackages(packages) {
  const missing = packages.filter((p) => !aptPackageInstalled(p));
  if (missing.length === 0) return [];
  const command = `apt-get install -y --no-install-recommends ${missing.join(' ')}`;
  if (isRoot() && hasCommand('apt-get')) {
    say(`installing ${missing.join(', ')} with apt-get...`);
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    run('apt-get', ['update', '-qq'], { env });
    run('sh', ['-c', command], { env });
    stopServicesStartedBy(missing.filter((p) => aptPackageInstalled(p)));
  } else {
    say(`missing ${missing.join(', ')}: install with: sudo ${command}`);
  }
  return packages.filter((p) => !aptPackageInstalled(p));
}

/**
 * Runs a command line of this repository (`tsx` TypeScript, e.g. edge/src/cli.ts) in the
 * foreground with this process's arguments and stdio, passes on SIGINT and SIGTERM (so it
 * can stop what it started and remove its folder), and exits with its exit code.
 */
export function runInForeground(entry, cwd) {
  // Relative paths mean the folder the command was typed in (npm keeps it as INIT_CWD; plain `node` does not).
  const env = { ...process.env, INIT_CWD: process.env.INIT_CWD ?? process.cwd() };
  const child = spawn(process.execPath, ['--import', 'tsx', entry, ...process.argv.slice(2)], { stdio: 'inherit', cwd, env });
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? (signal === null ? 1 : 128)));
}
