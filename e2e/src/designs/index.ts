/**
 * The experiment designs, one entry each (a scenario's `experiment.design`): its
 * fields and their checks, the runs of a trial, and the estimates. A new design is a
 * file beside this one and a line here; the scenario check, the runner and the report
 * read this table.
 */
import { AB_DESIGN } from './ab.js';
import { FAIRNESS_DESIGN } from './fairness.js';
import { HISTORY_DESIGN } from './history.js';
import type { DesignChecks, DesignContext, DesignSpec, SummaryContext } from './spec.js';
import { SWITCHBACK_DESIGN } from './switchback.js';
import type { DesignBase, DesignName, DesignRun, ExperimentDesign, ExperimentResult } from './types.js';

export const DESIGNS: { readonly [K in DesignName]: DesignSpec<Extract<ExperimentDesign, { design: K }>> } = {
  ab: AB_DESIGN,
  switchback: SWITCHBACK_DESIGN,
  history: HISTORY_DESIGN,
  fairness: FAIRNESS_DESIGN,
};

export const DESIGN_NAMES = Object.keys(DESIGNS) as DesignName[];

export function designSpec(name: DesignName): DesignSpec<ExperimentDesign> {
  return DESIGNS[name] as unknown as DesignSpec<ExperimentDesign>;
}

const COMMON = ['design', 'sessions', 'treatment', 'control', 'staggerS', 'seed'];

/** Checks a scenario's `experiment` and fills its defaults. */
export function parseExperiment(value: unknown, path: string, c: DesignChecks, ctx: DesignContext): ExperimentDesign {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) c.bad(path, value, 'an object with a design');
  const o = value as Record<string, unknown>;
  if (!DESIGN_NAMES.includes(o.design as DesignName)) c.bad(`${path}.design`, o.design, DESIGN_NAMES.join(', '));
  const spec = designSpec(o.design as DesignName);
  const allowed = [...(spec.sessionsBased ? COMMON : ['design', 'seed']), ...spec.fields];
  for (const key of Object.keys(o)) if (!allowed.includes(key)) c.bad(`${path}.${key}`, o[key], `no such field for design ${String(o.design)} (allowed: ${allowed.join(', ')})`);
  const base: DesignBase = {
    design: o.design as DesignName,
    sessions: spec.sessionsBased ? c.int(o, path, 'sessions', 1, 100, 10) : 2,
    treatment: c.arm(`${path}.treatment`, o.treatment ?? 'sammy'),
    control: c.arm(`${path}.control`, o.control ?? 'control'),
    staggerS: c.num(o, path, 'staggerS', 0, 600, 1),
    seed: c.int(o, path, 'seed', 0, 2 ** 31 - 1, 1),
  };
  return spec.parse(o, path, c, ctx, base);
}

/** `result.json`'s `experiment` from the runs so far. */
export function summarizeExperiment(d: ExperimentDesign, runs: DesignRun[], ctx: SummaryContext, skipped: string[]): ExperimentResult {
  const sessionsRun = runs.reduce((a, r) => a + r.sessions.length, 0);
  return { design: d.design, sessionsRun, ...designSpec(d.design).summarize(d, runs, ctx), skipped };
}

export type { DesignRun, ExperimentDesign, ExperimentResult } from './types.js';
