/**
 * `@sammy/native/build`: builds Sammy's C with the machine's C compiler, once per
 * source version, into a git-ignored cache:
 *
 * - the core's test driver (core/ + core/test_driver.c), with AddressSanitizer and
 *   UndefinedBehaviorSanitizer: a stray read or overflow on any test input ends it
 *   with an error, so the tests fail;
 * - the Traffic Server remap plugin (ats/sammy_edge.c + core/) against Debian's
 *   trafficserver-dev headers, with tsxs's flags (gnu99, a position-independent
 *   shared object whose Traffic Server symbols resolve when it loads) plus -O2 and
 *   warnings as errors: about a second;
 * - the nginx dynamic module (nginx/ + core/) against Debian's nginx-dev source tree
 *   (`./configure --with-compat --add-dynamic-module`, then `make modules`): the
 *   tree is configured once per nginx version (about 10 s), the module compiled in
 *   a few seconds.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

export const NATIVE_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const CORE_DIR = join(NATIVE_DIR, 'core');
export const ATS_DIR = join(NATIVE_DIR, 'ats');
export const NGINX_MODULE_DIR = join(NATIVE_DIR, 'nginx');
/** Git-ignored; SAMMY_NATIVE_CACHE moves it (a read-only checkout). */
export const CACHE_DIR = process.env['SAMMY_NATIVE_CACHE'] ?? join(NATIVE_DIR, '.cache');
/** Debian's trafficserver-dev puts the plugin API here. */
export const ATS_HEADER = '/usr/include/ts/ts.h';
/** Debian's nginx-dev puts the (partial) nginx source tree here, configure script included. */
export const NGINX_SOURCE_DIR = '/usr/share/nginx/src';
export const NGINX_BINARY = '/usr/sbin/nginx';

const C_FLAGS = ['-std=gnu99', '-O2', '-g', '-pipe', '-Wall', '-Wextra', '-Werror', '-Wno-unused-parameter', `-I${CORE_DIR}`];
/** The core: no server's API, so the test driver links it alone and both adapters link it whole. */
export const CORE_SOURCES = ['cmcd.c', 'sfv.c', 'options.c', 'rate.c', 'socket.c', 'telemetry.c'];

export class NativeBuildError extends Error {
  constructor(
    readonly code: 'SAMMY_NATIVE_UNAVAILABLE' | 'SAMMY_NATIVE_BUILD_FAILED',
    message: string,
  ) {
    super(message);
    this.name = 'NativeBuildError';
  }
}

/** A hash of the flags and of every C file in `dirs`: the cache key of what is built from them. */
function sourceHash(dirs: string[], extra: string[] = []): string {
  const hash = createHash('sha256').update(C_FLAGS.join(' ')).update(extra.join(' '));
  for (const dir of dirs) {
    for (const name of readdirSync(dir).sort()) {
      if (/\.[ch]$|^config$/.test(name)) hash.update(`${dir}/${name}`.slice(NATIVE_DIR.length)).update(readFileSync(join(dir, name)));
    }
  }
  return hash.digest('hex').slice(0, 12);
}

function onPath(command: string): boolean {
  return (process.env['PATH'] ?? '').split(':').some((dir) => existsSync(join(dir, command)));
}

/** Why nothing can be compiled here, or null. */
export function compilerUnavailableReason(): string | null {
  return onPath('cc') ? null : 'no C compiler (sudo apt-get install -y gcc libc6-dev)';
}

/** Why the Traffic Server plugin cannot be built here, or null. */
export function atsBuildUnavailableReason(): string | null {
  const noCompiler = compilerUnavailableReason();
  if (noCompiler !== null) return noCompiler;
  if (!existsSync(ATS_HEADER)) return `no Traffic Server plugin headers at ${ATS_HEADER} (sudo apt-get install -y trafficserver-dev)`;
  return null;
}

/** Why the nginx module cannot be built here, or null. */
export function nginxBuildUnavailableReason(): string | null {
  const noCompiler = compilerUnavailableReason();
  if (noCompiler !== null) return noCompiler;
  if (!existsSync(join(NGINX_SOURCE_DIR, 'configure'))) return `no nginx source tree at ${NGINX_SOURCE_DIR} (sudo apt-get install -y nginx-core nginx-dev)`;
  if (!onPath('make')) return 'no make (sudo apt-get install -y make)';
  return null;
}

function failed(what: string, err: unknown): NativeBuildError {
  const e = err as { stderr?: string; stdout?: string; message: string };
  const detail = `${e.stderr ?? ''}\n${e.stdout ?? ''}`.trim().split('\n').slice(-25).join('\n');
  return new NativeBuildError('SAMMY_NATIVE_BUILD_FAILED', `building ${what} failed: ${detail || e.message}`);
}

/** Compiles `sources` into `output` unless it is there; written under a temporary name, then renamed. */
async function compile(output: string, sources: string[], extraFlags: string[]): Promise<string> {
  if (existsSync(output)) return output;
  mkdirSync(dirname(output), { recursive: true });
  const partial = `${output}.partial-${process.pid}`;
  try {
    await execFileAsync('cc', [...C_FLAGS, ...extraFlags, '-o', partial, ...sources, '-lm'], { timeout: 120_000 });
  } catch (err) {
    throw failed(output, err);
  }
  renameSync(partial, output);
  return output;
}

const coreSources = (): string[] => CORE_SOURCES.map((s) => join(CORE_DIR, s));

/** The core's test driver (core/test_driver.c), built with AddressSanitizer and UBSan; needs only a C compiler. */
export async function buildTestDriver(): Promise<string> {
  const reason = compilerUnavailableReason();
  if (reason !== null) throw new NativeBuildError('SAMMY_NATIVE_UNAVAILABLE', reason);
  const dir = join(CACHE_DIR, `core-${sourceHash([CORE_DIR])}`);
  return compile(join(dir, 'test_driver'), [join(CORE_DIR, 'test_driver.c'), ...coreSources()], ['-fsanitize=address,undefined', '-fno-sanitize-recover=all', '-fno-omit-frame-pointer']);
}

/** The Traffic Server plugin's shared object, built if this source version is not built yet. */
export async function buildAtsPlugin(): Promise<string> {
  const reason = atsBuildUnavailableReason();
  if (reason !== null) throw new NativeBuildError('SAMMY_NATIVE_UNAVAILABLE', reason);
  const dir = join(CACHE_DIR, `ats-${sourceHash([CORE_DIR, ATS_DIR])}`);
  return compile(join(dir, 'sammy_edge.so'), [join(ATS_DIR, 'sammy_edge.c'), ...coreSources()], ['-fPIC', '-shared']);
}

/** The nginx version the module is built for: the source tree's, which nginx-dev keeps equal to the binary's. */
export function nginxSourceVersion(): string {
  const header = readFileSync(join(NGINX_SOURCE_DIR, 'src', 'core', 'nginx.h'), 'utf8');
  const m = /#define NGINX_VERSION\s+"([^"]+)"/.exec(header);
  if (m === null) throw new NativeBuildError('SAMMY_NATIVE_BUILD_FAILED', `no NGINX_VERSION in ${NGINX_SOURCE_DIR}/src/core/nginx.h`);
  return m[1]!;
}

/**
 * Configures a copy of the nginx source tree for dynamic modules (`--with-compat`:
 * what the module is built against then loads into Debian's nginx, which is built
 * with it too), once per nginx version; returns the tree.
 */
async function configuredNginxTree(): Promise<string> {
  const tree = join(CACHE_DIR, `nginx-${nginxSourceVersion()}`);
  if (existsSync(join(tree, 'objs', 'Makefile'))) return tree;
  const partial = `${tree}.partial-${process.pid}`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(dirname(partial), { recursive: true });
  cpSync(NGINX_SOURCE_DIR, partial, { recursive: true, dereference: true });
  try {
    // The module's own folder is given again for every build (make reads its sources from it).
    await execFileAsync('sh', ['./configure', '--with-compat', '--with-http_v2_module', '--with-http_ssl_module', '--with-threads', `--add-dynamic-module=${NGINX_MODULE_DIR}`], { cwd: partial, timeout: 300_000 });
  } catch (err) {
    rmSync(partial, { recursive: true, force: true });
    throw failed(`the nginx source tree (./configure in a copy of ${NGINX_SOURCE_DIR})`, err);
  }
  rmSync(tree, { recursive: true, force: true });
  renameSync(partial, tree);
  return tree;
}

let moduleBuild: Promise<string> | null = null;

/**
 * The module's shared object (`ngx_http_sammy_module.so`, for `load_module`), built
 * if this source version is not built yet. One build at a time per process: make
 * writes into the shared configured tree.
 */
export function buildNginxModule(): Promise<string> {
  moduleBuild ??= buildNginxModuleOnce().finally(() => (moduleBuild = null));
  return moduleBuild;
}

async function buildNginxModuleOnce(): Promise<string> {
  const reason = nginxBuildUnavailableReason();
  if (reason !== null) throw new NativeBuildError('SAMMY_NATIVE_UNAVAILABLE', reason);
  const output = join(CACHE_DIR, `nginx-module-${nginxSourceVersion()}-${sourceHash([CORE_DIR, NGINX_MODULE_DIR])}`, 'ngx_http_sammy_module.so');
  if (existsSync(output)) return output;
  const tree = await configuredNginxTree();
  try {
    // nginx's own flags (-Werror among them) compile the module and the core alike.
    await execFileAsync('make', ['-f', 'objs/Makefile', 'modules'], { cwd: tree, timeout: 300_000 });
  } catch (err) {
    throw failed('the nginx module', err);
  }
  mkdirSync(dirname(output), { recursive: true });
  const partial = `${output}.partial-${process.pid}`;
  cpSync(join(tree, 'objs', 'ngx_http_sammy_module.so'), partial);
  renameSync(partial, output);
  return output;
}
