/**
 * No import cycle in any package: modules form layers (in e2e, the records below the
 * result, the analysis below the lab's runtime; in the player's core, the records
 * below the arms). Type-only imports count too, since a cycle of types still ties two
 * modules' designs together. Packages import each other through their exports only
 * (checked by the workspace dependencies), so cycles are looked for within each.
 */
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { E2E_DIR, importCycles, relativeImports, REPO_DIR, sourceFiles } from './import-graph.js';

const PACKAGES = ['encoder', 'native', 'server', 'player', 'sim', 'edge', 'nginx', 'e2e'];

describe('imports', () => {
  test('the cycle finder finds a cycle and passes a layered graph', () => {
    const graph: Record<string, string[]> = { a: ['b'], b: ['c'], c: ['a'], d: ['a'] };
    expect(importCycles(['d'], (f) => graph[f] ?? [])).toEqual([['a', 'b', 'c', 'a']]);
    expect(importCycles(['a'], (f) => ({ a: ['b', 'c'], b: ['c'], c: [] })[f] ?? [])).toEqual([]);
  });

  test('type-only, re-export, side-effect and dynamic imports count', () => {
    const here = join(E2E_DIR, 'src', 'analysis', 'x.ts');
    const text = "import type { A } from './result.js';\nexport type { B } from './report.js';\nimport { c } from 'node:fs';\nimport './stats.js';\nconst d = await import('./svg.js');";
    expect(relativeImports(here, text).map((p) => relative(E2E_DIR, p))).toEqual(['src/analysis/result.ts', 'src/analysis/report.ts', 'src/analysis/stats.ts', 'src/analysis/svg.ts']);
  });

  test.each(PACKAGES)('no module of %s imports itself through others', (pkg) => {
    const roots = sourceFiles(join(REPO_DIR, pkg, 'src'));
    const cycles = importCycles(roots, (file) => relativeImports(file, readFileSync(file, 'utf8')));
    expect(cycles.map((c) => c.map((f) => relative(REPO_DIR, f)).join(' -> '))).toEqual([]);
  });

  test('no package reaches into another by relative path', () => {
    const crossing = PACKAGES.flatMap((pkg) =>
      sourceFiles(join(REPO_DIR, pkg, 'src')).flatMap((file) =>
        relativeImports(file, readFileSync(file, 'utf8'))
          .filter((target) => relative(join(REPO_DIR, pkg), target).startsWith('..'))
          .map((target) => `${relative(REPO_DIR, file)} -> ${relative(REPO_DIR, target)}`),
      ),
    );
    expect(crossing).toEqual([]);
  });
});
