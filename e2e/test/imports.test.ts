/**
 * No import cycle in any package: modules form layers (in the lab, result types below
 * the runner and the report, the runner above both; in the player's core, the records
 * below the arms). Type-only imports count too, since a cycle of types still ties two
 * modules' designs together. Packages import each other through their exports only
 * (checked by the workspace dependencies), so cycles are looked for within each.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const e2eDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const repoDir = join(e2eDir, '..');
const PACKAGES = ['encoder', 'native', 'server', 'player', 'sim', 'edge', 'nginx', 'e2e'];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

/** The repository files a module imports by relative path (`./x.js` is `./x.ts`). */
export function relativeImports(file: string, text: string): string[] {
  const specifiers = [
    ...text.matchAll(/^\s*(?:import|export)\b[^'";]*?from\s*['"](\.{1,2}\/[^'"]+)['"]/gm),
    ...text.matchAll(/^\s*import\s*['"](\.{1,2}\/[^'"]+)['"]/gm),
    ...text.matchAll(/\bimport\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g),
  ].map((m) => m[1]!);
  return specifiers
    .map((s) => resolve(dirname(file), s.replace(/\.js$/, '.ts')))
    .filter((path) => existsSync(path));
}

/** Every cycle reachable from `roots`, each as the list of files around it. */
export function importCycles(roots: string[], importsOf: (file: string) => string[]): string[][] {
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  const visit = (file: string) => {
    state.set(file, 'open');
    stack.push(file);
    for (const next of importsOf(file)) {
      if (state.get(next) === 'open') cycles.push([...stack.slice(stack.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const root of roots) if (!state.has(root)) visit(root);
  return cycles;
}

describe('imports', () => {
  test('the cycle finder finds a cycle and passes a layered graph', () => {
    const graph: Record<string, string[]> = { a: ['b'], b: ['c'], c: ['a'], d: ['a'] };
    expect(importCycles(['d'], (f) => graph[f] ?? [])).toEqual([['a', 'b', 'c', 'a']]);
    expect(importCycles(['a'], (f) => ({ a: ['b', 'c'], b: ['c'], c: [] })[f] ?? [])).toEqual([]);
  });

  test('type-only, re-export, side-effect and dynamic imports count', () => {
    const here = join(e2eDir, 'src', 'lab', 'x.ts');
    const text = "import type { A } from './result.js';\nexport type { B } from './runner.js';\nimport { c } from 'node:fs';\nimport './stats.js';\nconst d = await import('./svg.js');";
    expect(relativeImports(here, text).map((p) => relative(e2eDir, p))).toEqual(['src/lab/result.ts', 'src/lab/runner.ts', 'src/lab/stats.ts', 'src/lab/svg.ts']);
  });

  test.each(PACKAGES)('no module of %s imports itself through others', (pkg) => {
    const roots = sourceFiles(join(repoDir, pkg, 'src'));
    const cycles = importCycles(roots, (file) => relativeImports(file, readFileSync(file, 'utf8')));
    expect(cycles.map((c) => c.map((f) => relative(repoDir, f)).join(' -> '))).toEqual([]);
  });

  test('no package reaches into another by relative path', () => {
    const crossing = PACKAGES.flatMap((pkg) =>
      sourceFiles(join(repoDir, pkg, 'src')).flatMap((file) =>
        relativeImports(file, readFileSync(file, 'utf8'))
          .filter((target) => relative(join(repoDir, pkg), target).startsWith('..'))
          .map((target) => `${relative(repoDir, file)} -> ${relative(repoDir, target)}`),
      ),
    );
    expect(crossing).toEqual([]);
  });
});
