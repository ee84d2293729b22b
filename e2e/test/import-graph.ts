/**
 * The repository's static import graph, read from the source text: what the layer
 * tests walk (imports.test.ts: no cycles, no package reaching into another;
 * layers.test.ts: what the analysis may reach, how deep the chains go). Type-only,
 * re-export, side-effect and dynamic imports all count: a type still ties two modules'
 * designs together.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const E2E_DIR = join(dirname(fileURLToPath(import.meta.url)), '..');
export const REPO_DIR = join(E2E_DIR, '..');

/** Every TypeScript file under `dir`. */
export function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

/** Every module specifier a source text imports or re-exports, relative or bare. */
export function importSpecifiers(text: string): string[] {
  return [
    ...text.matchAll(/^\s*(?:import|export)\b[^'";]*?from\s*['"]([^'"]+)['"]/gm),
    ...text.matchAll(/^\s*import\s*['"]([^'"]+)['"]/gm),
    ...text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g),
  ].map((m) => m[1]!);
}

/** The repository files a module imports by relative path (`./x.js` is `./x.ts`). */
export function relativeImports(file: string, text: string): string[] {
  return importSpecifiers(text)
    .filter((s) => s.startsWith('./') || s.startsWith('../'))
    .map((s) => resolve(dirname(file), s.replace(/\.js$/, '.ts')))
    .filter((path) => existsSync(path));
}

/** A workspace package's import (`@sammy/player/abr`) as the file its exports name, or null. */
export function workspaceFile(specifier: string): string | null {
  const m = /^@sammy\/([^/]+)(\/.*)?$/.exec(specifier);
  if (!m) return null;
  const dir = join(REPO_DIR, m[1]!);
  if (!existsSync(join(dir, 'package.json'))) return null;
  const exports = (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { exports?: Record<string, unknown> }).exports ?? {};
  const target = exports[`.${m[2] ?? ''}`];
  return typeof target === 'string' && target.endsWith('.ts') ? join(dir, target) : null;
}

/** A module's imports: the repository files (relative or through a workspace package) and the bare specifiers left. */
export function importsOf(file: string): { files: string[]; bare: string[] } {
  const text = readFileSync(file, 'utf8');
  const specifiers = importSpecifiers(text).filter((s) => !s.startsWith('./') && !s.startsWith('../'));
  const packaged = specifiers.map((s) => [s, workspaceFile(s)] as const);
  return {
    files: [...relativeImports(file, text), ...packaged.flatMap(([, f]) => (f ? [f] : []))],
    bare: packaged.flatMap(([s, f]) => (f ? [] : [s])),
  };
}

/** Every cycle reachable from `roots`, each as the list of files around it. */
export function importCycles(roots: string[], importsOfFile: (file: string) => string[]): string[][] {
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  const visit = (file: string) => {
    state.set(file, 'open');
    stack.push(file);
    for (const next of importsOfFile(file)) {
      if (state.get(next) === 'open') cycles.push([...stack.slice(stack.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const root of roots) if (!state.has(root)) visit(root);
  return cycles;
}

/** The longest chain of imports from any of `roots` (the graph has no cycles), as the modules along it. */
export function longestChain(roots: string[], importsOfFile: (file: string) => string[]): string[] {
  const below = new Map<string, string[]>();
  const chainFrom = (file: string): string[] => {
    const known = below.get(file);
    if (known) return known;
    let best = [file];
    for (const next of importsOfFile(file)) {
      const chain = chainFrom(next);
      if (chain.length + 1 > best.length) best = [file, ...chain];
    }
    below.set(file, best);
    return best;
  };
  return roots.map(chainFrom).reduce((a, b) => (b.length > a.length ? b : a), []);
}

/**
 * Every path from `roots` to a module `forbidden` names (by its file or a bare import
 * it makes), through the imports `importsOfFile` gives; one path per forbidden reach.
 */
export function forbiddenReaches(
  roots: string[],
  importsOfFile: (file: string) => { files: string[]; bare: string[] },
  forbidden: (target: string) => boolean,
): string[][] {
  const seen = new Set<string>();
  const reaches: string[][] = [];
  const visit = (file: string, path: string[]) => {
    if (seen.has(file)) return;
    seen.add(file);
    const { files, bare } = importsOfFile(file);
    for (const b of bare) if (forbidden(b)) reaches.push([...path, file, b]);
    for (const next of files) {
      if (forbidden(next)) reaches.push([...path, file, next]);
      else visit(next, [...path, file]);
    }
  };
  for (const root of roots) visit(root, []);
  return reaches;
}
