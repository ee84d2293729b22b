/**
 * npm run sim:sweep -- [--traces DIR] [--ladder SEGMENTS_JSON] [--grid SPEC] [--duration S]
 *                      [--max-buffer S] [--link-efficiency LIST] [--out DIR]
 * Writes OUT/sweep.json (every row), OUT/sweep.md (the Pareto table) and OUT/sweep.svg.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_SAMMY_CONFIG, type SammyConfig } from '../core.js';
import { SimError } from '../errors.js';
import { loadSidecar } from '../ladder.js';
import { DEFAULT_SESSION_DURATION_S } from '../session.js';
import { DEFAULT_GRID_SPEC, gridPoints, parseGrid } from '../sweep/grid.js';
import { corpusTraces } from '../corpus/traces.js';
import { markdownReport, markdownTable, quietestRows, safestRows, stablestRows, svgPlot } from '../sweep/report.js';
import { runSweep } from '../sweep/sweep.js';
import { loadTrace } from '../trace.js';
import { atLinkEfficiencies, BUNDLED_LADDER, BUNDLED_TRACES, LINK_EFFICIENCY_HELP, linkEfficiencies, numberOption, runMain, userPath, cliValues, traceFiles } from './common.js';

const DEFAULT_OUT = fileURLToPath(new URL('../../out/sweep', import.meta.url));
const USAGE = `usage: npm run sim:sweep -- [--traces DIR] [--corpus] [--ladder SEGMENTS_JSON] [--grid SPEC] [--duration S] [--max-buffer S]
                          [--link-efficiency 1,0.85] [--out DIR]
  --traces   a folder of traces (JSON steps or mahimahi files); default: the bundled sim/traces
  --corpus   the corpus of npm run sim:corpus: those files (mahimahi at 40 ms) plus the generated families
  --grid     name=v1,v2;... over empty, full, beta, lookahead or any Sammy config field
             default: ${DEFAULT_GRID_SPEC}
  --link-efficiency  ${LINK_EFFICIENCY_HELP}; a list runs every trace at each
  --out      default: sim/out/sweep`;

async function main(): Promise<number> {
  const values = cliValues(
    {
      traces: { type: 'string' },
      corpus: { type: 'boolean', default: false },
      ladder: { type: 'string' },
      grid: { type: 'string', default: DEFAULT_GRID_SPEC },
      duration: { type: 'string' },
      'max-buffer': { type: 'string' },
      'link-efficiency': { type: 'string' },
      out: { type: 'string' },
    },
    USAGE,
  );
  if (values === null) return 0;
  const dir = values.traces === undefined ? BUNDLED_TRACES : userPath(values.traces);
  const files = traceFiles(dir);
  const ladderPath = values.ladder === undefined ? BUNDLED_LADDER : userPath(values.ladder);
  const sidecar = loadSidecar(ladderPath);
  const efficiencies = linkEfficiencies(values['link-efficiency']);
  const base = values.corpus ? corpusTraces({ files, ladderKbps: sidecar.representations.map((r) => r.bitrateKbps) }) : files.map((f) => loadTrace(f));
  const traces = atLinkEfficiencies(base, efficiencies);
  const grid = parseGrid(values.grid!);
  const points = gridPoints(grid);
  const durationS = numberOption(values.duration, '--duration', (n) => n > 0, 'a positive number of seconds') ?? DEFAULT_SESSION_DURATION_S;
  const maxBufferS = numberOption(values['max-buffer'], '--max-buffer', (n) => n > 0, 'a positive number of seconds');
  const out = values.out === undefined ? DEFAULT_OUT : userPath(values.out);

  const started = performance.now();
  let lastPrint = 0;
  const result = runSweep({
    traces,
    sidecar,
    points,
    durationS,
    ...(maxBufferS === undefined ? {} : { maxBufferS }),
    onProgress: (done, total) => {
      const now = performance.now();
      if (now - lastPrint > 2000 || done === total) {
        process.stderr.write(`sweep: ${done}/${total} parameter sets\n`);
        lastPrint = now;
      }
    },
  });
  const seconds = (performance.now() - started) / 1000;
  const keys = Object.keys(grid) as (keyof SammyConfig)[];
  const ctx = {
    traces: traces.map((t) => t.name),
    ladder: basename(ladderPath),
    durationS,
    maxBufferS: maxBufferS ?? DEFAULT_SAMMY_CONFIG.maxBufferS,
    grid: values.grid!,
    corpus: values.corpus ?? false,
    linkEfficiencies: efficiencies,
  };
  mkdirSync(out, { recursive: true });
  const title = `Sammy sweep: ${result.rows.length} parameter sets over ${traces.length} traces (thesis Fig. 2.5)`;
  writeFileSync(join(out, 'sweep.svg'), svgPlot(result, title));
  writeFileSync(join(out, 'sweep.md'), markdownReport(result, keys, ctx, 'sweep.svg'));
  writeFileSync(join(out, 'sweep.json'), JSON.stringify({ config: { ...ctx, ladderPath, points: points.length, sammyDefaults: DEFAULT_SAMMY_CONFIG }, ...result }, null, 1));
  console.log(markdownTable(result, keys));
  console.log('\nFewest traces missing the bar, then fewest switches, then most quality:\n');
  console.log(markdownTable(result, keys, stablestRows));
  console.log('\nFewest traces missing the bar, then least rebuffering, then most quality:\n');
  console.log(markdownTable(result, keys, safestRows));
  console.log('\nFewest traces missing the bar, then least time filling the link, then most quality:\n');
  console.log(markdownTable(result, keys, quietestRows));
  console.log(`\n${(result.rows.length + 2) * traces.length} sessions in ${seconds.toFixed(1)} s; wrote ${join(out, 'sweep.md')}, sweep.svg and sweep.json`);
  return 0;
}

runMain(main);
