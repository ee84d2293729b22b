/**
 * The three plugins, `@sammy/player/dashjs`, `/shaka` and `/hlsjs`, as an app sees
 * them: the built modules and declarations that package.json `exports` points to
 * (`npm test` builds them first). An app in a folder of its own, with only this package
 * and its one player installed, type-checks against the declarations (no
 * `skipLibCheck`) and bundles its example from plain JavaScript with esbuild: no
 * TypeScript source in the bundle and exactly one copy of its player. (Packing the
 * package, installing the tarball and playing each example in Chromium is the e2e
 * test `plugins-packaged.spec.ts`.)
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { build } from 'esbuild';
import ts from 'typescript';
import { LIB_DIR, PLAYER_DIR, playerCopies, PLUGIN_NAMES, pluginFiles, type PluginName } from '../scripts/build.js';

/** An installed package's folder (not every package exports its package.json). */
function packageRoot(name: string): string {
  let dir = dirname(createRequire(import.meta.url).resolve(name));
  while (!existsSync(join(dir, 'package.json')) || JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).name !== name) dir = dirname(dir);
  return dir;
}

beforeAll(() => {
  for (const name of PLUGIN_NAMES) {
    const f = pluginFiles(name);
    if (!existsSync(f.moduleFile) || !existsSync(f.typesFile)) throw new Error(`no built plugin ${name} in ${LIB_DIR}: run npm run build -w @sammy/player`);
  }
});

/** Module specifiers a JavaScript or declaration file imports or re-exports. */
function specifiers(text: string): string[] {
  return [...text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'";]*?from\s*['"]([^'"]+)['"]/g), ...text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)].map((m) => m[1]!);
}

/** An app folder with only @sammy/player (this package) and one player in node_modules. */
function appFolder(playerPackage: string, files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'sammy-app-'));
  mkdirSync(join(dir, 'node_modules', '@sammy'), { recursive: true });
  symlinkSync(PLAYER_DIR, join(dir, 'node_modules', '@sammy', 'player'));
  symlinkSync(packageRoot(playerPackage), join(dir, 'node_modules', playerPackage));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

const PACKAGE = JSON.parse(readFileSync(join(PLAYER_DIR, 'package.json'), 'utf8')) as {
  private?: boolean;
  files: string[];
  exports: Record<string, unknown>;
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
};
const README = readFileSync(join(PLAYER_DIR, 'README.md'), 'utf8');

/** What an app writes in TypeScript against each plugin: the call, the handle, the config's types. */
const TYPED_APPS: Readonly<Record<PluginName, string>> = {
  dashjs: `import * as dashjs from 'dashjs';
import { attachSammy, DEFAULT_SAMMY_CONFIG, type SammyHandle, type SessionQoE } from '@sammy/player/dashjs';
const player = dashjs.MediaPlayer().create();
const sammy: SammyHandle = attachSammy(player, { segments: '/media/segments.json', config: { maxBufferS: 60 }, history: 'my-app.history' });
// @ts-expect-error a config field the Sammy config does not have
attachSammy(player, { config: { maxBuffer: 60 } });
// @ts-expect-error segments is a URL or a function
attachSammy(player, { segments: 42 });
`,
  shaka: `import shaka from 'shaka-player';
import { attachSammy, DEFAULT_SAMMY_CONFIG, type SammyHandle, type SessionQoE } from '@sammy/player/shaka';
const player = new shaka.Player();
const sammy: SammyHandle = attachSammy(player, { segments: '/media/segments.json', config: { maxBufferS: 60 } });
// @ts-expect-error a config field the Sammy config does not have
attachSammy(player, { config: { maxBuffer: 60 } });
// @ts-expect-error not a Shaka player
attachSammy({}, {});
`,
  hlsjs: `import Hls from 'hls.js';
import { sammyHls, DEFAULT_SAMMY_CONFIG, type SammyHandle, type SessionQoE, type SammyHlsSetup } from '@sammy/player/hlsjs';
const setup: SammyHlsSetup = sammyHls(Hls, { segments: '/media/segments.json', config: { maxBufferS: 60 } });
const sammy: SammyHandle = setup.attach(new Hls({ ...setup.config, debug: false }));
// @ts-expect-error the hls.js class comes first
sammyHls({ segments: '/media/segments.json' });
`,
};

test('package.json: installable (not private), ships lib/, examples/ and the README, each player an optional peer', () => {
  expect(PACKAGE.private).toBeUndefined();
  expect(PACKAGE.files).toEqual(['lib/', 'examples/', 'README.md']);
  for (const name of PLUGIN_NAMES) {
    const { playerPackage } = pluginFiles(name);
    expect(PACKAGE.peerDependencies).toHaveProperty([playerPackage]);
    expect(PACKAGE.peerDependenciesMeta[playerPackage]).toEqual({ optional: true });
  }
});

describe.each(PLUGIN_NAMES)('@sammy/player/%s, built', (name) => {
  const f = pluginFiles(name);

  test('package.json exports the built module and its declarations', () => {
    expect(PACKAGE.exports[f.subpath]).toEqual({
      types: `./${relative(PLAYER_DIR, f.typesFile)}`,
      import: `./${relative(PLAYER_DIR, f.moduleFile)}`,
      default: `./${relative(PLAYER_DIR, f.moduleFile)}`,
    });
  });

  test('the module imports at most its player: everything of ours is inside, and no other workspace', () => {
    const imported = specifiers(readFileSync(f.moduleFile, 'utf8'));
    // dash.js's plugin registers classes with the app's dash.js (its FactoryMaker); Shaka's and hls.js's use the app's player only.
    expect(imported).toEqual(name === 'dashjs' ? ['dashjs'] : []);
  });

  test('the declarations reachable from the entry import only each other and its player', () => {
    const seen = new Set<string>();
    const outside: string[] = [];
    const visit = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      for (const s of specifiers(readFileSync(file, 'utf8'))) {
        if (s === f.playerPackage) continue;
        const target = resolve(dirname(file), s.replace(/\.js$/, '.d.ts'));
        if (!s.startsWith('.') || !target.startsWith(LIB_DIR) || !existsSync(target)) outside.push(`${relative(LIB_DIR, file)} -> ${s}`);
        else visit(target);
      }
    };
    visit(f.typesFile);
    expect(outside).toEqual([]);
    expect(seen.size).toBeGreaterThan(5);
  });

  test("the README's example app is examples/<player>/, verbatim (the e2e test bundles and plays those files)", () => {
    for (const [file, lang] of [['index.html', 'html'], ['app.js', 'js']] as const) {
      const text = readFileSync(join(PLAYER_DIR, 'examples', name, file), 'utf8');
      expect(README).toContain(`\`\`\`${lang}\n${text}\`\`\``);
    }
  });

  test('an app type-checks against the package through its exports, without skipLibCheck', () => {
    const dir = appFolder(f.playerPackage, { 'app.ts': `${TYPED_APPS[name]}const qoe: SessionQoE = sammy.qoe();\nconst fullMultiplier: number = DEFAULT_SAMMY_CONFIG.paceFullMultiplier;\nexport { qoe, fullMultiplier };\n` });
    try {
      const program = ts.createProgram([join(dir, 'app.ts')], {
        strict: true,
        noEmit: true,
        skipLibCheck: false,
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.ESNext,
        moduleResolution: ts.ModuleResolutionKind.Bundler,
        esModuleInterop: true,
        lib: ['lib.es2022.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'],
        types: [],
      });
      const diagnostics = ts.getPreEmitDiagnostics(program).filter((d) => d.category === ts.DiagnosticCategory.Error);
      const text = ts.formatDiagnostics(diagnostics, { getCanonicalFileName: (x) => x, getCurrentDirectory: () => dir, getNewLine: () => '\n' });
      expect(text).toBe('');
      // The package's types came from lib/, not from src/.
      const ours = program.getSourceFiles().map((s) => s.fileName).filter((s) => s.includes('/player/'));
      expect(ours.length).toBeGreaterThan(0);
      for (const s of ours) expect(s).toMatch(/\/player\/lib\/types\/.*\.d\.ts$/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  test('the example bundles from plain JavaScript: no TypeScript, exactly one copy of its player', async () => {
    const dir = appFolder(f.playerPackage, { 'app.js': readFileSync(join(PLAYER_DIR, 'examples', name, 'app.js'), 'utf8') });
    try {
      const result = await build({ entryPoints: [join(dir, 'app.js')], bundle: true, write: false, format: 'esm', platform: 'browser', metafile: true, logLevel: 'silent', outfile: join(dir, 'out.js') });
      const inputs = Object.keys(result.metafile.inputs).map((x) => resolve(x));
      expect(inputs.filter((x) => /\.tsx?$/.test(x))).toEqual([]);
      expect(inputs).toContain(f.moduleFile);
      expect(playerCopies(result.metafile, f.playerPackage)).toHaveLength(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
