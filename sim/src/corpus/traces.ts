/**
 * The evaluation corpus: every trace file in a folder (by default the bundled
 * `sim/traces`, which holds two real cellular traces from Winstein et al., NSDI 2013)
 * plus seeded generated families around the lab ladder, so that a change is judged over
 * many links, not tuned to one:
 *
 * - constant links 10% below and 10% above every rung's bitrate (where a rung choice
 *   flaps most easily);
 * - steps down and up, periodic fades, a 10 s outage once the buffer is full;
 * - LTE-like random walks (`src/tracegen.ts`) at several means and seeds, and walks
 *   that lose the link for 20-40 s early in the session, while the buffer is still
 *   filling (a cellular link in a tunnel or a lost handover).
 *
 * Generated traces carry {@link CORPUS_LATENCY_MS}; files carry their own latency (JSON
 * steps) or take the caller's default (mahimahi).
 */
import { parseMahimahiTrace, parseStepsTrace, loadTrace, type Trace } from '../trace.js';
import { LTE_LIKE, variableMahimahiTrace } from '../tracegen.js';

/** Request latency of the generated traces (a cellular round trip). */
export const CORPUS_LATENCY_MS = 40;
/** Generated periodic and stepped traces cover this much time, so a 600 s session never reaches the held last step early. */
const GENERATED_SPAN_S = 900;

interface Step {
  durationS: number;
  bandwidthKbps: number;
}

function steps(name: string, list: Step[]): Trace {
  return parseStepsTrace(list.map((s) => ({ ...s, latencyMs: CORPUS_LATENCY_MS })), name);
}

/** base, with `fadeS` at fadeKbps every `periodS` (the fade ends each period). */
function fades(baseKbps: number, fadeKbps: number, periodS: number, fadeS: number): Trace {
  const list: Step[] = [];
  for (let t = 0; t < GENERATED_SPAN_S; t += periodS) {
    list.push({ durationS: periodS - fadeS, bandwidthKbps: baseKbps }, { durationS: fadeS, bandwidthKbps: fadeKbps });
  }
  list.push({ durationS: 1, bandwidthKbps: baseKbps });
  return steps(`fades-${baseKbps}-${fadeKbps}-every-${periodS}s`, list);
}

/** Rates in kbps held for `holdS` each, the last one forever. */
function staircase(holdS: number, ...kbps: number[]): Trace {
  return steps(`steps-${kbps.join('-')}`, kbps.map((bandwidthKbps) => ({ durationS: holdS, bandwidthKbps })));
}

function outage(baseKbps: number, atS: number, lengthS: number): Trace {
  return steps(`outage-${lengthS}s-at-${atS}s-${baseKbps}`, [
    { durationS: atS, bandwidthKbps: baseKbps },
    { durationS: lengthS, bandwidthKbps: 0 },
    { durationS: 1, bandwidthKbps: baseKbps },
  ]);
}

/**
 * An LTE-like walk over the whole generated span (no repeat within a session) with no
 * delivery opportunity from `atS` for `lengthS`.
 */
function walkWithOutage(prefix: string, meanKbps: number, seed: number, atS: number, lengthS: number): Trace {
  const text = variableMahimahiTrace({ ...LTE_LIKE, meanKbps, seed, periodS: GENERATED_SPAN_S });
  const fromMs = atS * 1000;
  const toMs = (atS + lengthS) * 1000;
  const kept = text.split('\n').filter((line) => {
    const ms = Number(line);
    return line === '' || ms < fromMs || ms >= toMs;
  });
  return parseMahimahiTrace(kept.join('\n'), `${prefix}-${meanKbps}-seed${seed}-outage-${lengthS}s-at-${atS}s`, { defaultLatencyMs: CORPUS_LATENCY_MS });
}

/** LTE-like random walks: four means, two seeds each. */
const RANDOM_WALKS: readonly { meanKbps: number; seed: number }[] = [1500, 2500, 4000, 6000].flatMap((meanKbps, i) => [
  { meanKbps, seed: 1000 + 2 * i },
  { meanKbps, seed: 1001 + 2 * i },
]);

/** The generated families for a ladder with these rung bitrates (kbps, lowest first). */
export function generatedTraces(ladderKbps: readonly number[]): Trace[] {
  const constants = ladderKbps.flatMap((kbps) =>
    [0.9, 1.1].map((k) => {
      const rate = Math.round(kbps * k);
      return steps(`constant-${rate}`, [{ durationS: 1, bandwidthKbps: rate }]);
    }),
  );
  const walks = RANDOM_WALKS.map(({ meanKbps, seed }) =>
    parseMahimahiTrace(variableMahimahiTrace({ ...LTE_LIKE, meanKbps, seed }), `lte-walk-${meanKbps}-seed${seed}`, { defaultLatencyMs: CORPUS_LATENCY_MS }),
  );
  return [
    ...constants,
    staircase(120, 40000, 800),
    staircase(120, 5000, 600),
    staircase(120, 2000, 400),
    staircase(120, 40000, 1000, 300),
    staircase(120, 300, 1200),
    staircase(120, 600, 40000),
    staircase(120, 800, 3000),
    fades(5000, 400, 60, 10),
    fades(2000, 600, 60, 10),
    fades(1200, 300, 40, 8),
    fades(3000, 200, 30, 5),
    outage(3000, 120, 10),
    outage(1200, 120, 10),
    outage(40000, 120, 10),
    ...walks,
    walkWithOutage('lte-walk', 1500, 1100, 15, 20),
    walkWithOutage('lte-walk', 2000, 1101, 20, 30),
    walkWithOutage('lte-walk', 2500, 1102, 25, 30),
    walkWithOutage('lte-walk', 3000, 1103, 30, 40),
  ];
}

/**
 * A held-out family, never used to choose a parameter: other seeds, means and shapes
 * than the corpus's generated ones, to check that a choice made on the corpus holds on
 * links it was not chosen on (`npm run sim:corpus -- --holdout`).
 */
export function holdoutTraces(): Trace[] {
  const walks = [1200, 2000, 3000, 5000, 8000].flatMap((meanKbps, i) =>
    [0, 1].map((k) => {
      const seed = 7000 + 10 * i + k;
      return parseMahimahiTrace(variableMahimahiTrace({ ...LTE_LIKE, meanKbps, seed }), `holdout-walk-${meanKbps}-seed${seed}`, { defaultLatencyMs: CORPUS_LATENCY_MS });
    }),
  );
  const held = (name: string, list: Array<[durationS: number, bandwidthKbps: number]>): Trace =>
    steps(`holdout-${name}`, list.map(([durationS, bandwidthKbps]) => ({ durationS, bandwidthKbps })));
  const fade = (baseKbps: number, lowKbps: number, periodS: number, lengthS: number): Trace => {
    const list: Array<[number, number]> = [];
    for (let t = 0; t < GENERATED_SPAN_S; t += periodS) list.push([periodS - lengthS, baseKbps], [lengthS, lowKbps]);
    return held(`fade-${baseKbps}-${lowKbps}-every-${periodS}s`, [...list, [1, baseKbps]]);
  };
  return [
    ...walks,
    held('down-3000-500', [[90, 3000], [1, 500]]),
    held('down-up-1500-250-1500', [[100, 1500], [60, 250], [1, 1500]]),
    held('levels-6000-700-2500-350-1800', [[80, 6000], [80, 700], [80, 2500], [80, 350], [1, 1800]]),
    fade(4000, 300, 45, 7),
    fade(1500, 500, 25, 6),
    fade(900, 150, 50, 12),
    held('outage-20s-at-150s-2000', [[150, 2000], [20, 0], [1, 2000]]),
    walkWithOutage('holdout-walk', 1800, 7100, 25, 35),
    walkWithOutage('holdout-walk', 2800, 7101, 40, 25),
    held('constant-640', [[1, 640]]),
    held('constant-980', [[1, 980]]),
  ];
}

export interface CorpusOptions {
  /** Trace files to include (JSON steps or mahimahi). */
  files: readonly string[];
  ladderKbps: readonly number[];
  /** Add the generated families (default true). */
  generated?: boolean;
  /** Latency for mahimahi files, which carry none. */
  defaultLatencyMs?: number;
}

export function corpusTraces(options: CorpusOptions): Trace[] {
  const files = options.files.map((f) => loadTrace(f, { defaultLatencyMs: options.defaultLatencyMs ?? CORPUS_LATENCY_MS }));
  return options.generated === false ? files : [...files, ...generatedTraces(options.ladderKbps)];
}
