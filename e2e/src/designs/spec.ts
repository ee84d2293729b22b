/** What a design is in the registry (`index.ts`): its fields, its check, its runs and its estimates. */
import type { SimArm } from '@sammy/sim/arms';
import type { DesignBase, DesignRun, ExperimentDesign, ExperimentResult, PlannedRun, DesignScenario } from './types.js';

type Obj = Record<string, unknown>;

/** The scenario's field checks (scenario.ts passes its own, so every error reads alike). */
export interface DesignChecks {
  num(o: Obj, path: string, key: string, min: number, max: number, fallback?: number): number;
  int(o: Obj, path: string, key: string, min: number, max: number, fallback?: number): number;
  /** An arm the headless player runs. */
  arm(path: string, value: unknown): SimArm;
  bad(path: string, value: unknown, accepted: string): never;
}

export interface DesignContext {
  playS: number;
}

export interface SummaryContext {
  /** The ladder's top rung (a video's demand in the fairness design). */
  topBitrateKbps: number;
}

export interface DesignSpec<D extends ExperimentDesign> {
  /** One line for the README and the report. */
  description: string;
  /** Its own fields besides `design` (the common ones are checked once, in index.ts). */
  fields: readonly string[];
  /** The common session fields apply (sessions, treatment, control, staggerS). */
  sessionsBased: boolean;
  parse(o: Obj, path: string, check: DesignChecks, ctx: DesignContext, base: DesignBase): D;
  /** The runs of one trial, in the order they run. */
  plan(d: D, s: DesignScenario, trial: number): PlannedRun[];
  /** The estimates from every run so far. */
  summarize(d: D, runs: DesignRun[], ctx: SummaryContext): Omit<ExperimentResult, 'design' | 'sessionsRun' | 'skipped'>;
}
