/**
 * Builds the plugin (and the test driver of its pure parts) with the C compiler
 * against Debian's trafficserver-dev headers, once per source version, into the
 * git-ignored cache. The flags are tsxs's (the Traffic Server plugin build tool:
 * gnu99, position-independent shared object, Traffic Server's symbols resolved
 * when it loads the plugin), plus -O2 and warnings as errors. About a second.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { EdgeError } from './options.js';

const execFileAsync = promisify(execFile);

export const EDGE_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const PLUGIN_SOURCE_DIR = join(EDGE_DIR, 'plugin');
/** Git-ignored; SAMMY_EDGE_CACHE moves it (a read-only checkout). */
export const CACHE_DIR = process.env.SAMMY_EDGE_CACHE ?? join(EDGE_DIR, '.cache');
/** Debian's trafficserver-dev puts the plugin API here. */
export const ATS_HEADER = '/usr/include/ts/ts.h';

const C_FLAGS = ['-std=gnu99', '-O2', '-g', '-pipe', '-Wall', '-Wextra', '-Werror', '-Wno-unused-parameter'];
/** The plugin's pure parts: no Traffic Server API, so the test driver links them alone. */
const CORE_SOURCES = ['cmcd.c', 'sfv.c', 'options.c', 'socket.c', 'telemetry.c'];

function sourceHash(): string {
  const hash = createHash('sha256').update(C_FLAGS.join(' '));
  for (const name of readdirSync(PLUGIN_SOURCE_DIR).sort()) {
    if (/\.[ch]$/.test(name)) hash.update(name).update(readFileSync(join(PLUGIN_SOURCE_DIR, name)));
  }
  return hash.digest('hex').slice(0, 12);
}

/** Why nothing can be compiled here, or null. */
export function compilerUnavailableReason(): string | null {
  const hasCc = (process.env.PATH ?? '').split(':').some((dir) => existsSync(join(dir, 'cc')));
  return hasCc ? null : 'no C compiler (sudo apt-get install -y gcc libc6-dev)';
}

/** Why the plugin cannot be built here, or null. */
export function buildUnavailableReason(): string | null {
  const noCompiler = compilerUnavailableReason();
  if (noCompiler !== null) return noCompiler;
  if (!existsSync(ATS_HEADER)) return `no Traffic Server plugin headers at ${ATS_HEADER} (sudo apt-get install -y trafficserver-dev)`;
  return null;
}

async function compile(output: string, sources: string[], extraFlags: string[]): Promise<string> {
  if (existsSync(output)) return output;
  mkdirSync(dirname(output), { recursive: true });
  const partial = `${output}.partial-${process.pid}`;
  try {
    await execFileAsync('cc', [...C_FLAGS, ...extraFlags, '-o', partial, ...sources.map((s) => join(PLUGIN_SOURCE_DIR, s))], { timeout: 120_000 });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new EdgeError('SAMMY_EDGE_FAILED', `building ${output} failed: ${(e.stderr ?? '').trim() || e.message}`);
  }
  renameSync(partial, output);
  return output;
}

/** The plugin's shared object, built if this source version is not built yet. */
export async function buildPlugin(): Promise<string> {
  const reason = buildUnavailableReason();
  if (reason !== null) throw new EdgeError('SAMMY_EDGE_UNAVAILABLE', reason);
  const dir = join(CACHE_DIR, sourceHash());
  return compile(join(dir, 'sammy_edge.so'), ['sammy_edge.c', ...CORE_SOURCES], ['-fPIC', '-shared']);
}

/**
 * The test driver of the plugin's pure parts (plugin/test_driver.c); needs only a C
 * compiler. Built with AddressSanitizer and UBSan: a stray read or overflow on any
 * test input ends it with an error, so the tests fail.
 */
export async function buildTestDriver(): Promise<string> {
  const reason = compilerUnavailableReason();
  if (reason !== null) throw new EdgeError('SAMMY_EDGE_UNAVAILABLE', reason);
  const dir = join(CACHE_DIR, sourceHash());
  return compile(join(dir, 'test_driver'), ['test_driver.c', ...CORE_SOURCES], ['-fsanitize=address,undefined', '-fno-sanitize-recover=all', '-fno-omit-frame-pointer']);
}
