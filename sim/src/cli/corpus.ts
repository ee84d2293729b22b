/**
 * npm run sim:corpus -- [--traces DIR] [--files-only | --holdout] [--ladder SEGMENTS_JSON] [--duration S]
 *                       [--max-buffer S] [--config JSON] [--latency-ms MS] [--link-efficiency LIST] [--out DIR] [--json] [--check]
 * Runs sammy, control and fixed4x on every corpus trace and prints the comparison.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { SammyConfig } from '../core.js';
import { DEFAULT_SAMMY_CONFIG } from '../core.js';
import { compareOnCorpus } from '../corpus/compare.js';
import { corpusReport, corpusTable } from '../corpus/report.js';
import { CORPUS_LATENCY_MS, corpusTraces, holdoutTraces } from '../corpus/traces.js';
import { SimError } from '../errors.js';
import { loadSidecar } from '../ladder.js';
import { DEFAULT_SESSION_DURATION_S } from '../session.js';
import { atLinkEfficiencies, BUNDLED_LADDER, BUNDLED_TRACES, cliValues, jsonObject, LINK_EFFICIENCY_HELP, linkEfficiencies, numberOption, runMain, traceFiles, userPath } from './common.js';

const USAGE = `usage: npm run sim:corpus -- [--traces DIR] [--files-only | --holdout] [--ladder SEGMENTS_JSON] [--duration S] [--max-buffer S]
                           [--config '{"beta":0.6}'] [--latency-ms ${CORPUS_LATENCY_MS}] [--link-efficiency 1,0.85] [--out DIR] [--json] [--check]
  --traces      trace files to run (JSON steps or mahimahi); default: the bundled sim/traces
  --files-only  leave out the generated families (rung boundaries, steps, fades, outages, random walks)
  --holdout     run the held-out family instead (21 generated traces no parameter was chosen on)
  --latency-ms  request latency of mahimahi files (default ${CORPUS_LATENCY_MS})
  --link-efficiency  ${LINK_EFFICIENCY_HELP}; a list runs every trace at each
  --out DIR     also write DIR/corpus.md and DIR/corpus.json
  --json        print the result as JSON instead of the table
  --check       exit 1 when Sammy misses the bar on some trace`;

function main(): number {
  const values = cliValues(
    {
      traces: { type: 'string' },
      'files-only': { type: 'boolean', default: false },
      holdout: { type: 'boolean', default: false },
      ladder: { type: 'string' },
      duration: { type: 'string' },
      'max-buffer': { type: 'string' },
      config: { type: 'string' },
      'latency-ms': { type: 'string' },
      'link-efficiency': { type: 'string' },
      out: { type: 'string' },
      json: { type: 'boolean', default: false },
      check: { type: 'boolean', default: false },
    },
    USAGE,
  );
  if (values === null) return 0;
  const ladderPath = values.ladder === undefined ? BUNDLED_LADDER : userPath(values.ladder);
  const sidecar = loadSidecar(ladderPath);
  const durationS = numberOption(values.duration, '--duration', (n) => n > 0, 'a positive number of seconds') ?? DEFAULT_SESSION_DURATION_S;
  const maxBufferS = numberOption(values['max-buffer'], '--max-buffer', (n) => n > 0, 'a positive number of seconds') ?? DEFAULT_SAMMY_CONFIG.maxBufferS;
  const latencyMs = numberOption(values['latency-ms'], '--latency-ms', (n) => n >= 0, 'a non-negative number of ms') ?? CORPUS_LATENCY_MS;
  const sammy = jsonObject(values.config, '--config') as Partial<SammyConfig> | undefined;
  const efficiencies = linkEfficiencies(values['link-efficiency']);
  if (values.holdout && (values['files-only'] || values.traces !== undefined)) {
    throw new SimError('SIM_BAD_ARGS', '--holdout runs the held-out family alone; leave out --traces and --files-only');
  }
  const base = values.holdout
    ? holdoutTraces()
    : corpusTraces({
        files: traceFiles(values.traces === undefined ? BUNDLED_TRACES : userPath(values.traces)),
        ladderKbps: sidecar.representations.map((r) => r.bitrateKbps),
        generated: !values['files-only'],
        defaultLatencyMs: latencyMs,
      });
  const traces = atLinkEfficiencies(base, efficiencies);
  const result = compareOnCorpus({ traces, sidecar, durationS, arms: { maxBufferS, ...(sammy ? { sammy } : {}) } });
  const command = ['npm run sim:corpus --', ...process.argv.slice(2)].join(' ');
  if (values.out !== undefined) {
    const out = userPath(values.out);
    mkdirSync(out, { recursive: true });
    const context = { command, ladder: basename(ladderPath), durationS, maxBufferS, linkEfficiencies: efficiencies };
    writeFileSync(join(out, 'corpus.md'), corpusReport(result, context));
    writeFileSync(join(out, 'corpus.json'), JSON.stringify({ ...context, ...result }, null, 1));
  }
  console.log(values.json ? JSON.stringify(result) : corpusTable(result));
  if (result.failing.length > 0) console.error(`sammy misses the bar on ${result.failing.length} of ${result.traces.length} traces: ${result.failing.join(', ')}`);
  return values.check && result.failing.length > 0 ? 1 : 0;
}

runMain(main);
