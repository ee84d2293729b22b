/** Helpers the simulator's CLIs share: paths, numbers, the bundled ladder, errors. */
import { readdirSync, statSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { SimError } from '../errors.js';
import { atLinkEfficiency, type Trace } from '../trace.js';

/** The lab ladder (5 rungs, top 1.05 Mbps) from a real encoder run, bundled so nothing is encoded. */
export const BUNDLED_LADDER = fileURLToPath(new URL('../../fixtures/lab-segments.json', import.meta.url));
export const BUNDLED_TRACES = fileURLToPath(new URL('../../traces', import.meta.url));

/**
 * npm runs workspace scripts inside the workspace folder; a path the user typed is
 * relative to where they typed it (npm's INIT_CWD).
 */
export function userPath(path: string): string {
  return isAbsolute(path) ? path : resolve(process.env.INIT_CWD ?? process.cwd(), path);
}

/** The trace files of a folder (JSON steps or mahimahi), sorted; hidden files and markdown are skipped. */
export function traceFiles(dir: string): string[] {
  let files: string[];
  try {
    files = readdirSync(dir)
      .filter((f) => !f.startsWith('.') && !f.toLowerCase().endsWith('.md'))
      .map((f) => join(dir, f))
      .filter((p) => statSync(p).isFile())
      .sort();
  } catch (err) {
    throw new SimError('SIM_BAD_ARGS', `--traces must be a folder of trace files (${(err as Error).message})`);
  }
  if (files.length === 0) throw new SimError('SIM_BAD_ARGS', `no trace files in ${dir}`);
  return files;
}

/** `constant:KBPS` passes through; anything else is a path. */
export function traceSpec(spec: string): string {
  return spec.startsWith('constant:') ? spec : userPath(spec);
}

export function numberOption(value: string | undefined, flag: string, check: (n: number) => boolean, accepted: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || !check(n)) {
    throw new SimError('SIM_BAD_ARGS', `${flag} must be ${accepted}, got ${JSON.stringify(value)}`);
  }
  return n;
}

export function numberList(value: string | undefined, flag: string): number[] | undefined {
  if (value === undefined) return undefined;
  return value.split(',').map((part) => numberOption(part, flag, (n) => n > 0, 'a comma-separated list of positive numbers')!);
}

/** What `--link-efficiency` means, for the usage texts (trace.ts atLinkEfficiency; README "Link efficiency"). */
export const LINK_EFFICIENCY_HELP = 'the share of each trace\'s capacity a chunk download gets, in (0, 1]; default 1 (the fluid link)';

/** `--link-efficiency 1,0.85`: one or more efficiencies in (0, 1], without repeats; [1] when absent. */
export function linkEfficiencies(value: string | undefined, flag = '--link-efficiency'): number[] {
  if (value === undefined) return [1];
  const list = value.split(',').map((part) => numberOption(part, flag, (n) => n > 0 && n <= 1, 'a comma-separated list of numbers in (0, 1]')!);
  if (new Set(list).size !== list.length) throw new SimError('SIM_BAD_ARGS', `${flag} lists an efficiency twice: ${JSON.stringify(value)}`);
  return list;
}

/** Every trace at every efficiency, efficiency by efficiency (names carry any efficiency below 1). */
export function atLinkEfficiencies(traces: readonly Trace[], efficiencies: readonly number[]): Trace[] {
  return efficiencies.flatMap((e) => traces.map((t) => atLinkEfficiency(t, e)));
}

/** `--config '{"beta": 0.6}'`: Sammy overrides as a JSON object (validated by the core). */
export function jsonObject(value: string | undefined, flag: string): Record<string, unknown> | undefined {
  if (value === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch (err) {
    throw new SimError('SIM_BAD_ARGS', `${flag} must be a JSON object (${(err as Error).message})`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new SimError('SIM_BAD_ARGS', `${flag} must be a JSON object such as '{"beta": 0.6}'`);
  }
  return parsed as Record<string, unknown>;
}

/** Runs a CLI's main: known errors print one line and exit 2; anything else is a bug and shows its stack. */
export function runMain(main: () => Promise<number> | number): void {
  Promise.resolve()
    .then(main)
    .then(
      (code) => {
        process.exitCode = code;
      },
      (err: unknown) => {
        const e = err as Error & { code?: string };
        if (e && typeof e.code === 'string' && (e.name === 'SimError' || e.name === 'SammyConfigError' || e.name === 'SidecarError')) {
          console.error(`sim: ${e.message} [${e.code}]`);
          process.exitCode = 2;
        } else {
          console.error(err);
          process.exitCode = 1;
        }
      },
    );
}

type Options = NonNullable<ParseArgsConfig['options']>;
type Values<O extends Options> = { [K in keyof O]: O[K] extends { type: 'boolean' } ? boolean | undefined : string | undefined };

/**
 * Strict `parseArgs` with `--help`: the values, or null after printing the usage.
 * A bad flag is a SIM_BAD_ARGS error that carries the usage.
 */
export function cliValues<O extends Options>(options: O, usage: string): Values<O> | null {
  let values: Record<string, unknown>;
  try {
    ({ values } = parseArgs({ options: { ...options, help: { type: 'boolean', short: 'h' } }, strict: true }));
  } catch (err) {
    throw new SimError('SIM_BAD_ARGS', `${(err as Error).message}\n${usage}`);
  }
  if (values.help) {
    console.log(usage);
    return null;
  }
  return values as Values<O>;
}
