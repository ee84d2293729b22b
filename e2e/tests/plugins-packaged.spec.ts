/**
 * The three plugins as a new user gets them: `npm pack` of @sammy/player, the tarball
 * installed into an empty app folder beside only the player it needs (from the npm
 * registry's packages in npm's cache, `--offline`: no network), the README's example app
 * (player/examples/<player>/) bundled with esbuild from that folder, with exactly one
 * copy of the player in the bundle, and played in Chromium against the real server over
 * loopback, on a 24 s lab ladder (top 1.05 Mbps). For each of dash.js, Shaka and hls.js:
 * - no rtp until the first frame, and those requests served unpaced;
 * - then an rtp on every segment request (video and audio, init and media), within
 *   [2.9x, 11x] of the top bitrate;
 * - the server applied exactly those rates: its telemetry log and the Server-Timing
 *   header Chromium received (and the page recorded);
 * - every paced video request declared Sammy's floor (`sammy-floor`), every segment
 *   request naming both carried a `tb` at least its `br`, and the spiral guard raised none;
 * - every segment request's CMCD headers valid by `@montevideo-tech/cmcd-validator`.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { expect, test } from '@playwright/test';
import { build } from 'esbuild';
import type { Browser } from 'playwright-core';
import { DEFAULT_SAMMY_CONFIG, roundRtpKbps, type SessionQoE } from '@sammy/player/abr';
import { buildPlugins, PLAYER_DIR, playerCopies, PLUGIN_NAMES, pluginFiles, type PluginName } from '@sammy/player/build';
import { launchChromium } from '../src/browser.js';
import { ensureLabMedia, type LabMedia } from '../src/lab/media.js';
import { REPO_DIR } from '../src/paths.js';
import { run } from '../src/lab/processes.js';
import { runOnOwnServer, type PageRequest, type PageUnderTest, type SessionRun } from '../src/player-loopback.js';
import { brOfHeader, closeAndSkipHooks, expectServerApplied, invalidCmcdRequests, isSegment, loopbackUnavailableReason, printTimeline, rtpOfHeader, tbOfHeader } from './player-checks.js';

const FIXTURE_S = 24;
const PLAY_S = 6;
const reason = loopbackUnavailableReason(FIXTURE_S);

/** Each example app puts its player and the plugin's handle on `window`, and nothing else. */
interface ExampleAppGlobals {
  player: { destroy(): unknown };
  sammy: { qoe(): SessionQoE; requests(): PageRequest[]; detach(): void };
}

const EXAMPLE_APP: PageUnderTest = {
  path: '/',
  stop: () => {
    const { player, sammy } = window as unknown as ExampleAppGlobals;
    const qoe = sammy.qoe();
    sammy.detach();
    void player.destroy();
    return qoe;
  },
  requests: () => (window as unknown as ExampleAppGlobals).sammy.requests(),
};

interface LockEntry {
  version: string;
  resolved?: string;
  integrity: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

/**
 * A lockfile for an app that depends on `playerPackage` alone, at the version this
 * repository's lockfile has, with its whole dependency tree copied from there: `npm ci
 * --offline` then installs exactly the registry's tarballs that the repository's own `npm
 * ci` put in npm's cache, with no request to the registry (npm's offline mode cannot
 * resolve a version range without the registry's metadata, which `npm ci` never fetches).
 */
function appLock(appName: string, playerPackage: string): { manifest: object; lock: object } {
  const root = (JSON.parse(readFileSync(join(REPO_DIR, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> }).packages;
  const packages: Record<string, LockEntry> = {};
  const pending = [`node_modules/${playerPackage}`];
  for (let key = pending.pop(); key !== undefined; key = pending.pop()) {
    if (packages[key]) continue;
    const e = root[key];
    if (!e) throw new Error(`${key} is not in the repository's package-lock.json: run npm ci`);
    const name = key.slice(key.lastIndexOf('node_modules/') + 'node_modules/'.length);
    packages[key] = { ...e, resolved: e.resolved ?? `https://registry.npmjs.org/${name}/-/${name.split('/').pop()}-${e.version}.tgz` };
    // Each dependency (npm installs peers too) where Node finds it: the nearest
    // node_modules up from the dependent. An optional one the repository lacks stays out.
    for (const [dep, required] of [...Object.keys(e.dependencies ?? {}).map((d) => [d, true] as const), ...Object.keys({ ...e.optionalDependencies, ...e.peerDependencies }).map((d) => [d, false] as const)]) {
      let base = key;
      while (!root[`${base}/node_modules/${dep}`] && base.includes('/node_modules/')) base = base.slice(0, base.lastIndexOf('/node_modules/'));
      const found = root[`${base}/node_modules/${dep}`] ? `${base}/node_modules/${dep}` : `node_modules/${dep}`;
      if (root[found] || required) pending.push(found);
    }
  }
  const dependencies = { [playerPackage]: root[`node_modules/${playerPackage}`]!.version };
  return {
    manifest: { name: appName, private: true, type: 'module', dependencies },
    lock: { name: appName, lockfileVersion: 3, requires: true, packages: { '': { name: appName, dependencies }, ...packages } },
  };
}

let media: LabMedia;
let workDir: string;
let tarball: string;
let browser: Browser;
let topKbps: number;

/** The app folder of one player: the tarball and the player installed, the example bundled into `public/`. */
async function exampleApp(name: PluginName): Promise<{ publicDir: string; copies: string[]; pluginInput: boolean }> {
  const { playerPackage, moduleFile } = pluginFiles(name);
  const app = join(workDir, name);
  mkdirSync(join(app, 'public'), { recursive: true });
  const { manifest, lock } = appLock(`sammy-example-${name}`, playerPackage);
  writeFileSync(join(app, 'package.json'), JSON.stringify(manifest, null, 2));
  writeFileSync(join(app, 'package-lock.json'), JSON.stringify(lock, null, 2));
  const npm = ['--offline', '--no-audit', '--no-fund', '--ignore-scripts'];
  await run('npm', ['ci', ...npm], { cwd: app, timeoutMs: 180_000 });
  await run('npm', ['install', ...npm, tarball], { cwd: app, timeoutMs: 180_000 });
  // Only the player it needs: the package brought no other player (each is an optional peer).
  const installed = readdirSync(join(app, 'node_modules'));
  expect(installed).toContain(playerPackage);
  expect(readdirSync(join(app, 'node_modules', '@sammy'))).toEqual(['player']);
  for (const other of PLUGIN_NAMES.map((n) => pluginFiles(n).playerPackage).filter((p) => p !== playerPackage)) expect(installed).not.toContain(other);
  for (const file of ['index.html', 'app.js']) copyFileSync(join(PLAYER_DIR, 'examples', name, file), join(app, file === 'index.html' ? 'public/index.html' : file));
  const result = await build({ absWorkingDir: app, entryPoints: ['app.js'], bundle: true, format: 'esm', platform: 'browser', outfile: 'public/app.js', metafile: true, logLevel: 'warning' });
  const inputs = Object.keys(result.metafile.inputs);
  return {
    publicDir: join(app, 'public'),
    copies: playerCopies(result.metafile, playerPackage),
    pluginInput: inputs.some((f) => resolve(app, f) === join(app, 'node_modules', '@sammy', 'player', 'lib', `${name}.js`)) && !inputs.includes(moduleFile),
  };
}

test.describe.serial('the packed plugins, installed and bundled as an app does', () => {
  test.beforeAll(async ({}, info) => {
    if (reason) return;
    info.setTimeout(6 * 60_000);
    media = await ensureLabMedia('lab', FIXTURE_S, (line) => console.log(line));
    topKbps = media.sidecar.representations.at(-1)!.bitrateKbps;
    await buildPlugins();
    workDir = mkdtempSync(join(tmpdir(), 'sammy-plugins-'));
    const packed = JSON.parse(await run('npm', ['pack', '--workspace', '@sammy/player', '--pack-destination', workDir, '--json'], { cwd: REPO_DIR, timeoutMs: 120_000 })) as Array<{
      filename: string;
      files: Array<{ path: string }>;
    }>;
    tarball = join(workDir, packed[0]!.filename);
    const shipped = packed[0]!.files.map((f) => f.path);
    // What the package ships: the built plugins, the examples and the README; no sources, tests or configs.
    expect(shipped.filter((p) => !/^(lib\/|examples\/|README\.md$|package\.json$)/.test(p))).toEqual([]);
    for (const name of PLUGIN_NAMES) expect(shipped).toContain(`lib/${name}.js`);
    browser = await launchChromium();
  });

  closeAndSkipHooks(reason, () => ({ browser, workDir }));

  for (const name of PLUGIN_NAMES) {
    test(`${name}: the example app bundles with one copy of its player and plays with rtp applied after the first frame`, async ({}, info) => {
      info.setTimeout(4 * 60_000);
      const app = await exampleApp(name);
      expect(app.copies, `${pluginFiles(name).playerPackage} files in the bundle`).toHaveLength(1);
      expect(app.pluginInput, 'the bundle holds the installed lib/ module').toBe(true);

      const r: SessionRun = await runOnOwnServer(browser, { mediaDir: media.dir, playerDir: app.publicDir, logFile: join(workDir, `${name}-server.jsonl`) }, (baseUrl) => ({
        baseUrl,
        arm: 'sammy',
        config: {},
        playS: PLAY_S,
        page: EXAMPLE_APP,
      }));
      const s = r.session;
      expect(s.pageErrors).toEqual([]);
      expect(s.qoe.arm).toBe('sammy');
      expect(s.qoe.playDelayS).toBeGreaterThan(0);
      expect(s.qoe.chunks.length).toBeGreaterThan(3);
      printTimeline(name, s.qoe);

      // No rtp until the first frame; then an rtp on every segment request, within [2.9x, 11x] of the top bitrate.
      const initial = s.requests.filter((q) => q.phase === 'initial');
      const playing = s.requests.filter((q) => q.phase === 'playing');
      expect(initial.length).toBeGreaterThan(0);
      expect(playing.filter((q) => q.mediaType === 'video' && q.type === 'MediaSegment').length).toBeGreaterThanOrEqual(3);
      expect(playing.some((q) => q.mediaType === 'audio')).toBe(true);
      const firstPlaying = s.requests.findIndex((q) => q.phase === 'playing');
      expect(s.requests.slice(firstPlaying).every((q) => q.phase === 'playing')).toBe(true);
      const low = DEFAULT_SAMMY_CONFIG.paceFullMultiplier * topKbps;
      const high = roundRtpKbps(DEFAULT_SAMMY_CONFIG.paceEmptyMultiplier * topKbps);
      const wire = new Map<string, (number | null)[]>();
      for (const w of s.wire.filter((x) => isSegment(x.path))) wire.set(w.path, [...(wire.get(w.path) ?? []), rtpOfHeader(w.headers)]);
      for (const q of s.requests) {
        const rtp = wire.get(q.path)?.shift();
        expect(rtp, `${q.path} on the wire`).toBe(q.rtpKbps);
        if (q.phase === 'initial') expect(rtp, `${q.path} before the first frame`).toBeNull();
        else {
          expect(rtp, q.path).toBeGreaterThanOrEqual(low);
          expect(rtp, q.path).toBeLessThanOrEqual(high);
        }
      }

      // The server applied those rates (log and Server-Timing), and the guard raised none.
      expect(expectServerApplied(r)).toBe(0);
      const paced = r.log.filter((l) => l.pacing === 'paced');
      expect(paced.length).toBeGreaterThanOrEqual(4);
      expect(r.log.filter((l) => l.pacing === 'unpaced' && isSegment(l.path)).length).toBeGreaterThan(0);
      // tb at least br on every segment request that names both, video and audio (hls.js's br is a playlist BANDWIDTH, on audio too).
      const withBoth = s.wire.filter((x) => isSegment(x.path) && tbOfHeader(x.headers) !== null && brOfHeader(x.headers) !== null);
      expect(withBoth.length).toBeGreaterThan(5);
      for (const w of withBoth) expect(tbOfHeader(w.headers)!, `tb of ${w.path} against its br`).toBeGreaterThanOrEqual(brOfHeader(w.headers)!);
      for (const l of paced.filter((x) => /\/chunk-\d+-/.test(x.path) && !x.path.includes(`chunk-${media.sidecar.audio?.id}-`))) {
        expect(l.guardBasis, l.path).toBe('sammy-floor');
        expect(l.guardFloorKbps!, l.path).toBeLessThanOrEqual(l.rtpKbps!);
      }
      expect(s.qoe.chunks.filter((c) => c.phase === 'playing').every((c) => c.appliedRateKbps === c.rtpKbps)).toBe(true);
      // Every segment request's CMCD is valid CTA-5004, by the validator's reading.
      const cmcdRequests = s.wire.filter((x) => isSegment(x.path) && x.headers['cmcd-object'] !== undefined).length;
      expect(cmcdRequests).toBeGreaterThan(5);
      expect(invalidCmcdRequests(s.wire)).toEqual([]);
      const rates = playing.map((q) => q.rtpKbps!);
      console.log(
        `${name}: bundle holds ${app.copies.join(', ')}; ${initial.length} unpaced requests before the first frame, ${playing.length} paced after, rtp ${Math.min(...rates)}-${Math.max(...rates)} kbps; 0 invalid CMCD headers of ${cmcdRequests}`,
      );
    });
  }
});
