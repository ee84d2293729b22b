/**
 * `npm run build -w @sammy/player [-- --out DIR]`: bundles the demo page with esbuild
 * into `player/dist/` (git-ignored; the server serves it at `/`; each web player and its
 * adapter is a chunk of its own in `chunks/`, loaded only by a page that plays with
 * it), and builds the three player plugins, `@sammy/player/dashjs`, `/shaka` and
 * `/hlsjs`, into `player/lib/` (git-ignored; the package's `files`): each one ES module
 * with everything of ours inside and no player (the app's own is the only one), and its
 * type declarations, which package.json `exports` points to. An app imports them with no
 * TypeScript setup.
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
/** The players a plugin is built for; each plugin's entry is `src/<name>/index.ts`. */
export const PLUGIN_NAMES = ['dashjs', 'shaka', 'hlsjs'] as const;
export type PluginName = (typeof PLUGIN_NAMES)[number];

/** One built plugin, as package.json `exports` names it. */
export interface PluginFiles {
  /** The subpath an app imports (`@sammy/player/<name>`). */
  subpath: string;
  /** The module, `lib/<name>.js`. */
  moduleFile: string;
  /** The entry of its type declarations. */
  typesFile: string;
  /** The npm package of the player it attaches to (a peer dependency, never bundled). */
  playerPackage: string;
}

const PLAYER_PACKAGES: Readonly<Record<PluginName, string>> = { dashjs: 'dashjs', shaka: 'shaka-player', hlsjs: 'hls.js' };

export function pluginFiles(name: PluginName): PluginFiles {
  return {
    subpath: `./${name}`,
    moduleFile: join(LIB_DIR, `${name}.js`),
    typesFile: join(LIB_DIR, 'types', name, 'index.d.ts'),
    playerPackage: PLAYER_PACKAGES[name],
  };
}

/**
 * The files of `playerPackage` an esbuild bundle holds (its metafile's inputs): one per
 * copy of the player, since each build of a player is one file. Two means the bundle
 * carries two players (the app's and one of its own).
 */
export function playerCopies(metafile: { inputs: Record<string, unknown> }, playerPackage: string): string[] {
  return Object.keys(metafile.inputs).filter((f) => f.includes(`node_modules/${playerPackage}/`));
}

const COMMON: BuildOptions = { bundle: true, format: 'esm', platform: 'browser', target: 'es2022', sourcemap: true, metafile: true, logLevel: 'warning' };

function outputBytes(metafile: { outputs: Record<string, { bytes: number }> }, suffix: string): number {
  return metafile.outputs[Object.keys(metafile.outputs).find((f) => f.endsWith(suffix))!]!.bytes;
}

/** Builds the page into `outDir`; returns the size in bytes of `main.js` (the page without any player). */
export async function buildPlayer(outDir: string = DEFAULT_OUT_DIR): Promise<number> {
  mkdirSync(outDir, { recursive: true });
  // Chunk names carry a content hash: an earlier build's chunks would pile up beside these.
  rmSync(join(outDir, 'chunks'), { recursive: true, force: true });
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
 * The plugins' type declarations, from the TypeScript sources with the package's own
 * compiler settings. Each entry's declarations import nothing outside `lib/types/` but
 * its player's package (checked by test/package.test.ts).
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
  const program = ts.createProgram(
    PLUGIN_NAMES.map((name) => join(PLAYER_DIR, 'src', name, 'index.ts')),
    options,
  );
  const result = program.emit();
  const errors = [...ts.getPreEmitDiagnostics(program), ...result.diagnostics].filter((d) => d.category === ts.DiagnosticCategory.Error);
  if (errors.length > 0) throw new Error(ts.formatDiagnostics(errors, { getCanonicalFileName: (f) => f, getCurrentDirectory: () => PLAYER_DIR, getNewLine: () => '\n' }));
}

/** Builds the three plugins into `lib/`; returns each module's size in bytes. */
export async function buildPlugins(): Promise<Record<PluginName, number>> {
  rmSync(LIB_DIR, { recursive: true, force: true });
  const sizes = await Promise.all(
    PLUGIN_NAMES.map(async (name) => {
      const files = pluginFiles(name);
      const result = await build({
        ...COMMON,
        entryPoints: [join(PLAYER_DIR, 'src', name, 'index.ts')],
        outfile: files.moduleFile,
        // The app's own player: a second copy would have its own classes and state. The
        // Shaka and hls.js adapters import only its types; this keeps any slip out.
        external: [files.playerPackage, `${files.playerPackage}/*`],
      });
      return [name, outputBytes(result.metafile!, `${name}.js`)] as const;
    }),
  );
  emitDeclarations(join(LIB_DIR, 'types'));
  return Object.fromEntries(sizes) as Record<PluginName, number>;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const i = process.argv.indexOf('--out');
  const outDir = i > 0 && process.argv[i + 1] ? resolve(process.argv[i + 1]!) : DEFAULT_OUT_DIR;
  Promise.all([buildPlayer(outDir), buildPlugins()]).then(
    ([pageBytes, pluginBytes]) =>
      console.log(
        `player built: ${outDir} (main.js ${(pageBytes / 1024).toFixed(0)} KB); plugins in ${LIB_DIR}: ` +
          PLUGIN_NAMES.map((name) => `@sammy/player/${name} ${(pluginBytes[name] / 1024).toFixed(0)} KB`).join(', '),
      ),
    (err: Error) => {
      console.error(`player build failed: ${err.message}`);
      process.exit(1);
    },
  );
}
