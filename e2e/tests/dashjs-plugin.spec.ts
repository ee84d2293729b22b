/**
 * The dash.js plugin as an app uses it: the README's example page
 * (player/examples/dashjs.html) with the built package output (`@sammy/player/dashjs`
 * where package.json `exports` points) and dash.js's own ES module build, nothing of
 * src/, against the real server over loopback, on a 24 s lab ladder (top 1.05 Mbps):
 * - no rtp until the first frame, and those requests served unpaced;
 * - then an rtp on every segment request (video and audio, init and media), within
 *   [2.9x, 11x] of the top bitrate;
 * - the server applied exactly those rates: its telemetry log and the Server-Timing
 *   header Chromium received (and the page recorded);
 * - the spiral guard (on by default) never raised one: every paced video request sent
 *   the top bitrate as `tb`, so its floor, 2.5x that, lay below the rtp.
 */
import { copyFileSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from '@playwright/test';
import type { Browser } from 'playwright-core';
import { DEFAULT_SAMMY_CONFIG, roundRtpKbps, type SessionQoE } from '@sammy/player/abr';
import { buildDashjsPlugin, PLAYER_DIR } from '@sammy/player/build';
import { DEFAULT_SERVER_OPTIONS } from '@sammy/server/options';
import { launchChromium } from '../src/browser.js';
import { ensureLabMedia, type LabMedia } from '../src/lab/media.js';
import { runOnOwnServer, type PageRequest, type PageUnderTest, type SessionRun } from '../src/player-loopback.js';
import { closeAndSkipHooks, expectServerApplied, isSegment, loopbackUnavailableReason, printTimeline, rtpOfHeader, tbOfHeader } from './player-checks.js';

const FIXTURE_S = 24;
const PLAY_S = 10;
const reason = loopbackUnavailableReason(FIXTURE_S);

/** The example page reaches `window.player` and `window.sammy`, the plugin's handle, and nothing else. */
interface ExamplePageGlobals {
  player: { destroy(): void };
  sammy: { qoe(): SessionQoE; requests(): PageRequest[]; detach(): void };
}

const EXAMPLE_PAGE: PageUnderTest = {
  path: '/',
  stop: () => {
    const { player, sammy } = window as unknown as ExamplePageGlobals;
    const qoe = sammy.qoe();
    sammy.detach();
    player.destroy();
    return qoe;
  },
  requests: () => (window as unknown as ExamplePageGlobals).sammy.requests(),
};

/** Where an app's bundler or import map finds a module: its package's `exports`, `import` condition. */
const importFile = (specifier: string): string => fileURLToPath(import.meta.resolve(specifier));

let media: LabMedia;
let workDir: string;
let browser: Browser;
let run: SessionRun | null = null;
let topKbps: number;

async function session(): Promise<SessionRun> {
  run ??= await runOnOwnServer(browser, { mediaDir: media.dir, playerDir: join(workDir, 'page'), logFile: join(workDir, 'server.jsonl') }, (baseUrl) => ({
    baseUrl,
    arm: 'sammy',
    config: {},
    playS: PLAY_S,
    page: EXAMPLE_PAGE,
  }));
  return run;
}

test.describe.serial('the dash.js plugin on the README example page', () => {
  test.beforeAll(async ({}, info) => {
    if (reason) return;
    info.setTimeout(5 * 60_000);
    media = await ensureLabMedia('lab', FIXTURE_S, (line) => console.log(line));
    topKbps = media.sidecar.representations.at(-1)!.bitrateKbps;
    await buildDashjsPlugin();
    workDir = mkdtempSync(join(tmpdir(), 'sammy-dashjs-plugin-'));
    const page = join(workDir, 'page');
    mkdirSync(page);
    // What the example's import map names, from where an app installing the packages has them.
    copyFileSync(join(PLAYER_DIR, 'examples', 'dashjs.html'), join(page, 'index.html'));
    copyFileSync(importFile('@sammy/player/dashjs'), join(page, 'sammy-dashjs.js'));
    copyFileSync(importFile('dashjs'), join(page, 'dash.all.min.js'));
    browser = await launchChromium();
  });

  closeAndSkipHooks(reason, () => ({ browser, workDir }));

  test('the page plays through the built package: the module is lib/, not src/', async () => {
    expect(importFile('@sammy/player/dashjs')).toBe(join(PLAYER_DIR, 'lib', 'dashjs.js'));
    const r = await session();
    expect(r.session.pageErrors).toEqual([]);
    expect(r.session.qoe.arm).toBe('sammy');
    expect(r.session.qoe.playDelayS).toBeGreaterThan(0);
    expect(r.session.qoe.chunks.length).toBeGreaterThan(3);
    printTimeline('plugin', r.session.qoe);
  });

  test('no rtp until the first frame; then an rtp on every segment request, within [2.9x, 11x] of the top bitrate', async () => {
    const { session: s } = await session();
    const initial = s.requests.filter((q) => q.phase === 'initial');
    const playing = s.requests.filter((q) => q.phase === 'playing');
    expect(initial.length).toBeGreaterThan(0);
    expect(playing.filter((q) => q.mediaType === 'video' && q.type === 'MediaSegment').length).toBeGreaterThanOrEqual(3);
    expect(playing.some((q) => q.mediaType === 'audio')).toBe(true);
    // Once playing, nothing goes back to unpaced (no seek in this session).
    const firstPlaying = s.requests.findIndex((q) => q.phase === 'playing');
    expect(s.requests.slice(firstPlaying).every((q) => q.phase === 'playing')).toBe(true);
    const low = DEFAULT_SAMMY_CONFIG.paceFullMultiplier * topKbps;
    const high = roundRtpKbps(DEFAULT_SAMMY_CONFIG.paceEmptyMultiplier * topKbps);
    // On the wire, as Chromium sent them (the page's own list says which phase each was in).
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
    const rates = playing.map((q) => q.rtpKbps!);
    console.log(`plugin: ${initial.length} unpaced requests before the first frame, ${playing.length} paced after, rtp ${Math.min(...rates)}-${Math.max(...rates)} kbps (${(Math.min(...rates) / topKbps).toFixed(2)}x-${(Math.max(...rates) / topKbps).toFixed(2)}x the top ${topKbps} kbps)`);
  });

  test('the server applied those rates: its telemetry log and Server-Timing, and the guard raised none', async () => {
    const r = await session();
    expect(expectServerApplied(r)).toBe(0);
    const paced = r.log.filter((l) => l.pacing === 'paced');
    expect(paced.length).toBeGreaterThanOrEqual(4);
    expect(r.log.filter((l) => l.pacing === 'unpaced' && isSegment(l.path)).length).toBeGreaterThan(0);
    // Every paced video request carried the top bitrate as tb, and declared its floor (sammy-floor): the guard's floor, at most the rtp.
    for (const w of r.session.wire.filter((x) => isSegment(x.path) && rtpOfHeader(x.headers) !== null && /ot=v/.test(x.headers['cmcd-object'] ?? ''))) {
      expect(tbOfHeader(w.headers), w.path).toBe(topKbps);
    }
    for (const l of paced.filter((x) => x.path.includes('/chunk-4-'))) {
      expect(l.guardBasis, l.path).toBe('sammy-floor');
      expect(l.guardFloorKbps!, l.path).toBeLessThanOrEqual(l.rtpKbps!);
    }
    expect(r.session.qoe.chunks.filter((c) => c.phase === 'playing').every((c) => c.appliedRateKbps === c.rtpKbps)).toBe(true);
  });
});
