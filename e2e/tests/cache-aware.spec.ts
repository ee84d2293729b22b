/**
 * Cached answers are not measurements, on every player. Segments are served with
 * `cache-control: public, max-age=3600`, as an origin should; so in one browser
 * context, a session that seeks back and a reload of the page fetch segments Chromium
 * answers from its cache. Per player (the demo page, `sammy` arm, 24 s lab ladder, the
 * real server over loopback): play, seek back to the start, play, reload, play. The
 * server's telemetry log says which video chunks reached it; every chunk record of a
 * request the server never saw must be marked `notFromNetwork`, and no record the
 * server did serve may be; the marked ones carry no applied rate; the session's
 * throughput summaries leave them out; and the history the reloaded session wrote (if
 * any) comes from chunks that crossed the network.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import type { Browser, Page } from 'playwright-core';
import type { ChunkRecord, PlayerName, SessionQoE } from '@sammy/player/abr';
import { buildPlayer, DEFAULT_OUT_DIR } from '@sammy/player/build';
import { launchChromium } from '../src/browser.js';
import { ensureLabMedia, type LabMedia } from '../src/lab/media.js';
import { startLoopbackServer, stopLoopbackServer } from '../src/player-loopback.js';
import { closeAndSkipHooks, loopbackUnavailableReason } from './player-checks.js';

const FIXTURE_S = 24;
const reason = loopbackUnavailableReason(FIXTURE_S);

let media: LabMedia;
let workDir: string;
let browser: Browser;

const chunkPath = (c: Pick<ChunkRecord, 'rung' | 'index'>) => `/media/chunk-${c.rung}-${String(c.index + 1).padStart(5, '0')}.m4s`;

/** Waits for the page's first frame, then `playS` of playing. */
async function play(page: Page, playS: number): Promise<void> {
  await page.waitForFunction(() => typeof window.sammy?.qoe().playDelayS === 'number', undefined, { polling: 50, timeout: 20_000 });
  await page.waitForTimeout(playS * 1000);
}

const pageState = (page: Page) =>
  page.evaluate(() => ({ qoe: window.sammy!.qoe(), history: (window.sammy as unknown as { history(): number[] | null }).history() }));

test.describe.serial('cached answers are neither throughput samples nor history', () => {
  test.beforeAll(async ({}, info) => {
    if (reason) return;
    info.setTimeout(5 * 60_000);
    media = await ensureLabMedia('lab', FIXTURE_S, (line) => console.log(line));
    await buildPlayer();
    workDir = mkdtempSync(join(tmpdir(), 'sammy-cache-'));
    browser = await launchChromium();
  });

  closeAndSkipHooks(reason, () => ({ browser, workDir }));

  for (const player of ['dashjs', 'shaka', 'hlsjs'] as const satisfies readonly PlayerName[]) {
    test(`${player}: a seek back and a reload, answered from Chromium's cache, leave the estimate and the history alone`, async ({}, info) => {
      info.setTimeout(3 * 60_000);
      const server = await startLoopbackServer({ mediaDir: media.dir, playerDir: DEFAULT_OUT_DIR, logFile: join(workDir, `${player}.jsonl`) });
      const context = await browser.newContext();
      const sessions: { qoe: SessionQoE; history: number[] | null }[] = [];
      try {
        const page = await context.newPage();
        await page.goto(`${server.url}/?player=${player}&arm=sammy`, { waitUntil: 'load' });
        await play(page, 5);
        await page.evaluate(() => void (document.querySelector('video')!.currentTime = 0.5));
        await page.waitForTimeout(3000);
        sessions.push(await pageState(page));
        await page.reload({ waitUntil: 'load' });
        await play(page, 4);
        sessions.push(await pageState(page));
      } finally {
        await context.close();
      }
      const log = await stopLoopbackServer(server);
      const served = new Map<string, number>();
      for (const l of log.filter((x) => /\/chunk-\d+-\d+\.m4s$/.test(x.path) && x.status >= 200 && x.status < 300)) served.set(l.path, (served.get(l.path) ?? 0) + 1);

      const records = sessions.flatMap((s) => s.qoe.chunks);
      const fromCache = records.filter((c) => c.notFromNetwork !== undefined);
      // Per path: the records the server never answered are exactly the marked ones.
      const byPath = new Map<string, ChunkRecord[]>();
      for (const c of records) byPath.set(chunkPath(c), [...(byPath.get(chunkPath(c)) ?? []), c]);
      for (const [path, cs] of byPath) {
        const marked = cs.filter((c) => c.notFromNetwork !== undefined).length;
        expect(marked, `${path}: ${cs.length} records, served ${served.get(path) ?? 0} times`).toBe(Math.max(0, cs.length - (served.get(path) ?? 0)));
      }
      expect(fromCache.length, 'the reload was answered from the cache').toBeGreaterThan(0);
      for (const c of fromCache) {
        expect(c.notFromNetwork).toBe('browser-cache');
        expect(c.appliedRateKbps, chunkPath(c)).toBeNull();
      }
      // The summaries are of network chunks only.
      for (const s of sessions) {
        const network = s.qoe.chunks.filter((c) => c.notFromNetwork === undefined);
        if (!network.some((c) => c.phase === 'initial')) expect(s.qoe.initialThroughputKbps).toBeNull();
        if (!network.some((c) => c.phase === 'playing')) expect(s.qoe.chunkThroughputKbps).toBeNull();
      }
      // The reloaded session adds a history entry only if a startup chunk of its own crossed the network.
      const [first, second] = sessions as [(typeof sessions)[0], (typeof sessions)[0]];
      const reloadedStartupFromNetwork = second.qoe.chunks.some((c) => c.phase === 'initial' && c.notFromNetwork === undefined);
      expect(second.history!.length).toBe(first.history!.length + (reloadedStartupFromNetwork ? 1 : 0));
      console.log(
        `${player}: ${records.length} video chunk records over two page loads, ${fromCache.length} from Chromium's cache (none sampled, none in the history); ` +
          `the server answered ${[...served.values()].reduce((a, b) => a + b, 0)} chunk requests (video and audio); history ${first.history!.length} -> ${second.history!.length} entries; ` +
          `chunk throughput after the reload ${second.qoe.chunkThroughputKbps === null ? 'none (no network chunk)' : `${Math.round(second.qoe.chunkThroughputKbps)} kbps`}`,
      );
    });
  }
});
