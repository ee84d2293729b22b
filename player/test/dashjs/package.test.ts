/**
 * `@sammy/player/dashjs` as an app sees it: the built module and declarations that
 * package.json `exports` points to (`npm test` builds them first). An app in a folder of
 * its own, with only this package and dash.js installed, type-checks against the
 * declarations (no `skipLibCheck`) and bundles with esbuild from plain JavaScript, with
 * no TypeScript source anywhere in the bundle.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { build } from 'esbuild';
import ts from 'typescript';
import { DASHJS_PLUGIN_FILE, DASHJS_PLUGIN_TYPES, LIB_DIR, PLAYER_DIR } from '../../scripts/build.js';

/** The installed dash.js package's folder (its exports do not include package.json). */
function packageRoot(entry: string): string {
  let dir = dirname(entry);
  while (!existsSync(join(dir, 'package.json'))) dir = dirname(dir);
  return dir;
}
const DASHJS_DIR = packageRoot(createRequire(import.meta.url).resolve('dashjs'));

beforeAll(() => {
  if (!existsSync(DASHJS_PLUGIN_FILE) || !existsSync(DASHJS_PLUGIN_TYPES)) throw new Error(`no built plugin in ${LIB_DIR}: run npm run build -w @sammy/player`);
});

/** Module specifiers a JavaScript or declaration file imports or re-exports. */
function specifiers(text: string): string[] {
  return [...text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'";]*?from\s*['"]([^'"]+)['"]/g), ...text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)].map((m) => m[1]!);
}

/** An app folder with only @sammy/player (this package) and dash.js in node_modules. */
function appFolder(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'sammy-app-'));
  mkdirSync(join(dir, 'node_modules', '@sammy'), { recursive: true });
  symlinkSync(PLAYER_DIR, join(dir, 'node_modules', '@sammy', 'player'));
  symlinkSync(DASHJS_DIR, join(dir, 'node_modules', 'dashjs'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

const PACKAGE = JSON.parse(readFileSync(join(PLAYER_DIR, 'package.json'), 'utf8')) as {
  exports: Record<string, unknown>;
  peerDependencies: Record<string, string>;
};

describe('@sammy/player/dashjs, built', () => {
  test('package.json exports the built module and its declarations; dash.js is a peer dependency', () => {
    expect(PACKAGE.exports['./dashjs']).toEqual({
      types: `./${relative(PLAYER_DIR, DASHJS_PLUGIN_TYPES)}`,
      import: `./${relative(PLAYER_DIR, DASHJS_PLUGIN_FILE)}`,
      default: `./${relative(PLAYER_DIR, DASHJS_PLUGIN_FILE)}`,
    });
    expect(PACKAGE.peerDependencies).toHaveProperty('dashjs');
  });

  test('the module imports dash.js and nothing else: everything of ours is inside', () => {
    const imported = new Set(specifiers(readFileSync(DASHJS_PLUGIN_FILE, 'utf8')));
    expect([...imported]).toEqual(['dashjs']);
  });

  test('the declarations reachable from the entry import only each other and dash.js', () => {
    const seen = new Set<string>();
    const outside: string[] = [];
    const visit = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      for (const s of specifiers(readFileSync(file, 'utf8'))) {
        if (s === 'dashjs') continue;
        const target = resolve(dirname(file), s.replace(/\.js$/, '.d.ts'));
        if (!s.startsWith('.') || !target.startsWith(LIB_DIR) || !existsSync(target)) outside.push(`${relative(LIB_DIR, file)} -> ${s}`);
        else visit(target);
      }
    };
    visit(DASHJS_PLUGIN_TYPES);
    expect(outside).toEqual([]);
    expect(seen.size).toBeGreaterThan(5);
  });

  test("the README's example page is examples/dashjs.html, verbatim (the browser test plays that file)", () => {
    const example = readFileSync(join(PLAYER_DIR, 'examples', 'dashjs.html'), 'utf8');
    expect(readFileSync(join(PLAYER_DIR, 'README.md'), 'utf8')).toContain(`\`\`\`html\n${example}\`\`\``);
    expect(example.split('\n').length).toBeLessThanOrEqual(30);
  });

  test('an app type-checks against the package through its exports, without skipLibCheck', () => {
    const dir = appFolder({
      'app.ts': `import * as dashjs from 'dashjs';
import { attachSammy, DEFAULT_SAMMY_CONFIG, type SammyHandle, type SessionQoE } from '@sammy/player/dashjs';
const player = dashjs.MediaPlayer().create();
const sammy: SammyHandle = attachSammy(player, { segments: '/media/segments.json', config: { maxBufferS: 60 }, history: 'my-app.history' });
const qoe: SessionQoE = sammy.qoe();
const fullMultiplier: number = DEFAULT_SAMMY_CONFIG.paceFullMultiplier;
// @ts-expect-error a config field the Sammy config does not have
attachSammy(player, { config: { maxBuffer: 60 } });
// @ts-expect-error segments is a URL or a function
attachSammy(player, { segments: 42 });
export { qoe, fullMultiplier };
`,
    });
    try {
      const program = ts.createProgram([join(dir, 'app.ts')], {
        strict: true,
        noEmit: true,
        skipLibCheck: false,
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.ESNext,
        moduleResolution: ts.ModuleResolutionKind.Bundler,
        lib: ['lib.es2022.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'],
        types: [],
      });
      const diagnostics = ts.getPreEmitDiagnostics(program).filter((d) => d.category === ts.DiagnosticCategory.Error);
      const text = ts.formatDiagnostics(diagnostics, { getCanonicalFileName: (f) => f, getCurrentDirectory: () => dir, getNewLine: () => '\n' });
      expect(text).toBe('');
      // The package's types came from lib/, not from src/.
      const ours = program.getSourceFiles().map((f) => f.fileName).filter((f) => f.includes('/player/'));
      expect(ours.length).toBeGreaterThan(0);
      for (const f of ours) expect(f).toMatch(/\/player\/lib\/types\/.*\.d\.ts$/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  test('an app bundles from plain JavaScript with no TypeScript anywhere in the bundle', async () => {
    const dir = appFolder({
      'app.js': `import * as dashjs from 'dashjs';
import { attachSammy } from '@sammy/player/dashjs';
const player = dashjs.MediaPlayer().create();
window.sammy = attachSammy(player, { segments: '/media/segments.json' });
player.initialize(document.querySelector('video'), '/media/manifest.mpd', true);
`,
    });
    try {
      const result = await build({ entryPoints: [join(dir, 'app.js')], bundle: true, write: false, format: 'esm', platform: 'browser', metafile: true, logLevel: 'silent', outfile: join(dir, 'out.js') });
      const inputs = Object.keys(result.metafile.inputs).map((f) => resolve(f));
      expect(inputs.filter((f) => /\.tsx?$/.test(f))).toEqual([]);
      expect(inputs).toContain(DASHJS_PLUGIN_FILE);
      expect(inputs.some((f) => f.includes('dashjs/dist/'))).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
