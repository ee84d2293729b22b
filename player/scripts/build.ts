/**
 * `npm run build -w @sammy/player [-- --out DIR]`: bundles the demo page with esbuild
 * into `player/dist/` (git-ignored; the server serves it at `/`; each web player and its
 * adapter is a chunk of its own in `chunks/`, loaded only by a page that plays with
 * it), and builds the dash.js
 * plugin `@sammy/player/dashjs` into `player/lib/` (git-ignored): one ES module with
 * everything but dash.js (a peer dependency) inside, and its type declarations, which
 * package.json `exports` points to. An app imports it with no TypeScript setup.
 */
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type BuildOptions } from 'esbuild';
import ts from 'typescript';

export const PLAYER_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const DEFAULT_OUT_DIR = join(PLAYER_DIR, 'dist');
export const LIB_DIR = join(PLAYER_DIR, 'lib');
/** The plugin's module and the entry of its type declarations, as package.json `exports` names them. */
export const DASHJS_PLUGIN_FILE = join(LIB_DIR, 'dashjs.js');
export const DASHJS_PLUGIN_TYPES = join(LIB_DIR, 'types', 'dashjs', 'index.d.ts');

const COMMON: BuildOptions = { bundle: true, format: 'esm', platform: 'browser', target: 'es2022', sourcemap: true, metafile: true, logLevel: 'warning' };

function outputBytes(metafile: { outputs: Record<string, { bytes: number }> }, suffix: string): number {
  return metafile.outputs[Object.keys(metafile.outputs).find((f) => f.endsWith(suffix))!]!.bytes;
}

/** Builds the page into `outDir`; returns the size in bytes of `main.js` (the page without any player). */
export async function buildPlayer(outDir: string = DEFAULT_OUT_DIR): Promise<number> {
  mkdirSync(outDir, { recursive: true });
  const result = await build({
    ...COMMON,
    entryPoints: [join(PLAYER_DIR, 'src', 'app', 'main.ts')],
    outdir: outDir,
    entryNames: '[name]',
    chunkNames: 'chunks/[name]-[hash]',
    splitting: true,
    minify: true,
    legalComments: 'linked',
  });
  const app = join(PLAYER_DIR, 'src', 'app');
  copyFileSync(join(app, 'index.html'), join(outDir, 'index.html'));
  copyFileSync(join(app, 'style.css'), join(outDir, 'style.css'));
  const require = createRequire(import.meta.url);
  copyFileSync(join(dirname(require.resolve('uplot/package.json')), 'dist', 'uPlot.min.css'), join(outDir, 'uPlot.min.css'));
  return outputBytes(result.metafile!, 'main.js');
}

/**
 * The plugin's type declarations, from the TypeScript sources with the package's own
 * compiler settings. The public entry's declarations import nothing outside
 * `lib/types/` but `dashjs` (checked by test/dashjs/package.test.ts).
 */
function emitDeclarations(outDir: string): void {
  const configPath = join(PLAYER_DIR, 'tsconfig.json');
  const parsed = ts.getParsedCommandLineOfConfigFile(configPath, {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} });
  if (!parsed) throw new Error(`cannot read ${configPath}`);
  const options: ts.CompilerOptions = {
    ...parsed.options,
    noEmit: false,
    declaration: true,
    emitDeclarationOnly: true,
    rootDir: join(PLAYER_DIR, 'src'),
    outDir,
    types: [],
  };
  const program = ts.createProgram([join(PLAYER_DIR, 'src', 'dashjs', 'index.ts')], options);
  const result = program.emit();
  const errors = [...ts.getPreEmitDiagnostics(program), ...result.diagnostics].filter((d) => d.category === ts.DiagnosticCategory.Error);
  if (errors.length > 0) throw new Error(ts.formatDiagnostics(errors, { getCanonicalFileName: (f) => f, getCurrentDirectory: () => PLAYER_DIR, getNewLine: () => '\n' }));
}

/** Builds `@sammy/player/dashjs` into `lib/`; returns the module's size in bytes. */
export async function buildDashjsPlugin(): Promise<number> {
  rmSync(LIB_DIR, { recursive: true, force: true });
  const result = await build({
    ...COMMON,
    entryPoints: [join(PLAYER_DIR, 'src', 'dashjs', 'index.ts')],
    outfile: DASHJS_PLUGIN_FILE,
    // The app's own dash.js: a second copy would have its own FactoryMaker and classes.
    external: ['dashjs'],
  });
  emitDeclarations(join(LIB_DIR, 'types'));
  return outputBytes(result.metafile!, 'dashjs.js');
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const i = process.argv.indexOf('--out');
  const outDir = i > 0 && process.argv[i + 1] ? resolve(process.argv[i + 1]!) : DEFAULT_OUT_DIR;
  Promise.all([buildPlayer(outDir), buildDashjsPlugin()]).then(
    ([pageBytes, pluginBytes]) =>
      console.log(`player built: ${outDir} (main.js ${(pageBytes / 1024).toFixed(0)} KB); @sammy/player/dashjs: ${DASHJS_PLUGIN_FILE} (${(pluginBytes / 1024).toFixed(0)} KB)`),
    (err: Error) => {
      console.error(`player build failed: ${err.message}`);
      process.exit(1);
    },
  );
}
