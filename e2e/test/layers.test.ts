/**
 * e2e's layers (README, "Files"): the analysis, the scenario and the experiment
 * designs are pure, so the offline report (`--report`, `--pool`, `--compare-players`)
 * loads no code that spawns a process or touches a network namespace; and the import
 * chains stay short enough to follow.
 */
import { join, relative, sep } from 'node:path';
import { E2E_DIR, forbiddenReaches, importsOf, longestChain, REPO_DIR, sourceFiles } from './import-graph.js';

/** The pure side: what `--report DIR` loads. */
const PURE_DIRS = ['analysis', 'scenario', 'designs'].map((d) => join(E2E_DIR, 'src', d));

/** The lab's runtime (namespaces, links, neighbours, processes, the runner) and the headless player's processes. */
const RUNTIME_DIRS = ['lab', 'headless'].map((d) => join(E2E_DIR, 'src', d) + sep);

/** Node's process spawning, the browser driver and the server's process helpers, whatever imports them. */
const SPAWNING = new Set(['child_process', 'node:child_process', 'playwright', 'playwright-core', '@playwright/test']);

function forbidden(target: string): boolean {
  return SPAWNING.has(target) || RUNTIME_DIRS.some((d) => target.startsWith(d)) || target === join(REPO_DIR, 'server', 'src', 'process.ts');
}

/** The longest chain in e2e/src, in modules; the split of issue 40 took it from 15 to 13. */
const MAX_CHAIN_MODULES = 13;

const shown = (path: string[]) => path.map((f) => (f.startsWith(REPO_DIR) ? relative(REPO_DIR, f) : f)).join(' -> ');

describe('layers', () => {
  test('the reach finder reports a forbidden module behind a clean one, and passes a graph without one', () => {
    const graph: Record<string, { files: string[]; bare: string[] }> = {
      report: { files: ['stats', 'neighbours'], bare: ['node:fs'] },
      stats: { files: [], bare: [] },
      neighbours: { files: ['processes'], bare: [] },
      processes: { files: [], bare: ['node:child_process'] },
    };
    const of = (f: string) => graph[f] ?? { files: [], bare: [] };
    expect(forbiddenReaches(['report'], of, (t) => t === 'node:child_process')).toEqual([['report', 'neighbours', 'processes', 'node:child_process']]);
    expect(forbiddenReaches(['stats'], of, (t) => t === 'node:child_process')).toEqual([]);
    expect(longestChain(['report', 'stats'], (f) => of(f).files)).toEqual(['report', 'neighbours', 'processes']);
  });

  test('the analysis, scenario and design modules reach no process or namespace code', () => {
    const roots = PURE_DIRS.flatMap(sourceFiles);
    expect(roots.length).toBeGreaterThan(20);
    expect(forbiddenReaches(roots, importsOf, forbidden).map(shown)).toEqual([]);
  });

  test(`no import chain in e2e/src is longer than ${MAX_CHAIN_MODULES} modules`, () => {
    const chain = longestChain(sourceFiles(join(E2E_DIR, 'src')), (f) => importsOf(f).files.filter((g) => g.startsWith(E2E_DIR)));
    console.log(`longest import chain in e2e/src (${chain.length} modules): ${shown(chain)}`);
    expect(chain.length).toBeLessThanOrEqual(MAX_CHAIN_MODULES);
  });
});
