/**
 * `npm run build -w @sammy/player [-- --out DIR]`: bundles the demo page with esbuild
 * into `player/dist/` (git-ignored; the server serves it at `/`). Each web player's
 * adapter is a chunk of its own (`chunks/`), loaded only by a page that plays with it.
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

export const PLAYER_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const DEFAULT_OUT_DIR = join(PLAYER_DIR, 'dist');

/** Builds the page into `outDir`; returns the size in bytes of `main.js` (the page without any player). */
export async function buildPlayer(outDir: string = DEFAULT_OUT_DIR): Promise<number> {
  mkdirSync(outDir, { recursive: true });
  const result = await build({
    entryPoints: [join(PLAYER_DIR, 'src', 'app', 'main.ts')],
    outdir: outDir,
    entryNames: '[name]',
    chunkNames: 'chunks/[name]-[hash]',
    splitting: true,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    sourcemap: true,
    metafile: true,
    logLevel: 'warning',
    legalComments: 'linked',
  });
  const app = join(PLAYER_DIR, 'src', 'app');
  copyFileSync(join(app, 'index.html'), join(outDir, 'index.html'));
  copyFileSync(join(app, 'style.css'), join(outDir, 'style.css'));
  const require = createRequire(import.meta.url);
  copyFileSync(join(dirname(require.resolve('uplot/package.json')), 'dist', 'uPlot.min.css'), join(outDir, 'uPlot.min.css'));
  return result.metafile.outputs[Object.keys(result.metafile.outputs).find((f) => f.endsWith('main.js'))!]!.bytes;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const i = process.argv.indexOf('--out');
  const outDir = i > 0 && process.argv[i + 1] ? resolve(process.argv[i + 1]!) : DEFAULT_OUT_DIR;
  buildPlayer(outDir).then(
    (bytes) => console.log(`player built: ${outDir} (main.js ${(bytes / 1024).toFixed(0)} KB)`),
    (err: Error) => {
      console.error(`player build failed: ${err.message}`);
      process.exit(1);
    },
  );
}
