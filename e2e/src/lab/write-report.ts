/**
 * A report written from a result directory: what the report takes beside the result is
 * computed here, where process code may run (the neighbour's replay through labtools on
 * trace links), and handed to the pure renderer (src/analysis/report.ts).
 */
import { readResult, writeReport, type ReportExtras } from '../analysis/report.js';
import type { LabResult } from '../analysis/result.js';
import { neighbourAloneDelays } from './neighbour-alone.js';

/** Everything `renderReport` takes beside the result, computed from it (a replay through labtools on trace links). */
export async function reportExtras(result: LabResult): Promise<ReportExtras> {
  return { neighbourAlone: await neighbourAloneDelays(result) };
}

/**
 * Re-renders DIR/report.md and its figures from DIR's result file and what it names
 * (its trace file, for `reportExtras`) (`npm run lab -- --report DIR`; the runner calls
 * it too). The report depends only on those, so rendering it again writes the same bytes.
 */
export async function writeReportFromDir(dir: string): Promise<string[]> {
  const result = readResult(dir);
  return writeReport(result, dir, await reportExtras(result));
}
