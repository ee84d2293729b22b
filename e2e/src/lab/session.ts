/**
 * One video session in the player page (its URL parameters and `window.sammy`:
 * player/README.md, "The page"), driven through
 * Playwright: history reset, play, buffer sampling, QoE at the end.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { Arm, SessionQoE } from '@sammy/player/abr';
import type { SessionResult } from '../analysis/records.js';
import { LabError } from '../lab-error.js';
import { sleep } from './processes.js';

export interface SessionOptions {
  baseUrl: string;
  arm: Arm;
  /** Overrides of the player config, sent as `&config=` (e.g. `maxBufferS`). */
  playerConfig: Record<string, unknown>;
  startupTimeoutS: number;
  /** Reset the player's throughput history first (`window.sammy.resetHistory()`). */
  resetHistory: boolean;
  /** Browser storage to start from (this arm's history from its previous session). */
  storageState?: StorageState;
  /** Buffer sampling period. */
  sampleMs?: number;
  /** Called just before the play request (a trace link restarts its trace there). */
  onPlayRequest?: () => Promise<void>;
}

export type StorageState = Awaited<ReturnType<BrowserContext['storageState']>>;

/** A browser session's result, with the browser storage it ended with (the player history it leaves for the arm's next session; not written to the result). */
export interface BrowserSessionResult extends SessionResult {
  storageState?: StorageState;
}

export interface RunningSession {
  readonly originMs: number;
  /** Resolves with the epoch ms of the first frame; rejects after the startup timeout. */
  playbackStart: Promise<number>;
  finish(): Promise<BrowserSessionResult>;
}

declare global {
  interface Window {
    sammy?: { qoe(): SessionQoE; config(): Record<string, unknown>; resetHistory(): void; ready: Promise<void> };
  }
}

export function playerUrl(baseUrl: string, arm: Arm, config: Record<string, unknown>, autoplay: boolean): string {
  return `${baseUrl}/?arm=${arm}&autoplay=${autoplay ? 1 : 0}&config=${encodeURIComponent(JSON.stringify(config))}`;
}

/** Thesis section 2.5.6: every arm starts from the same (empty) throughput history. */
async function resetHistory(page: Page, o: SessionOptions): Promise<void> {
  await page.goto(playerUrl(o.baseUrl, o.arm, o.playerConfig, false), { waitUntil: 'load', timeout: o.startupTimeoutS * 1000 });
  await page.waitForFunction(() => window.sammy !== undefined, undefined, { timeout: o.startupTimeoutS * 1000 });
  await page.evaluate(async () => {
    await window.sammy!.ready;
    window.sammy!.resetHistory();
  });
}

export async function startSession(browser: Browser, o: SessionOptions): Promise<RunningSession> {
  const context: BrowserContext = await browser.newContext(o.storageState ? { storageState: o.storageState } : {});
  const page = await context.newPage();
  const pageErrors: string[] = [];
  page.on('pageerror', (err) => pageErrors.push(err.message.slice(0, 500)));
  if (o.resetHistory) {
    try {
      await resetHistory(page, o);
    } catch (err) {
      await context.close();
      throw new LabError('LAB_PLAYER_PAGE', `the player page at ${o.baseUrl} did not offer window.sammy.resetHistory(): ${(err as Error).message.split('\n')[0]}`);
    }
  }
  const url = playerUrl(o.baseUrl, o.arm, o.playerConfig, true);
  if (o.onPlayRequest) {
    try {
      await o.onPlayRequest();
    } catch (err) {
      await context.close();
      throw err;
    }
  }
  const originMs = Date.now();
  await page.goto(url, { waitUntil: 'commit' });

  const buffer: Array<[number, number, number]> = [];
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const s = await page
        .evaluate(() => {
          const v = document.querySelector('video');
          if (!v || v.buffered.length === 0) return null;
          return [v.buffered.end(v.buffered.length - 1) - v.currentTime, v.currentTime] as [number, number];
        })
        .catch(() => null);
      if (s) buffer.push([(Date.now() - originMs) / 1000, Math.max(0, s[0]), s[1]]);
      await sleep(o.sampleMs ?? 500);
    }
  })();

  let playbackStartMs: number | null = null;
  const playbackStart = page
    .waitForFunction(() => typeof window.sammy?.qoe().playDelayS === 'number', undefined, { polling: 50, timeout: o.startupTimeoutS * 1000 })
    .then(() => (playbackStartMs = Date.now()));
  playbackStart.catch(() => {});

  return {
    originMs,
    playbackStart,
    async finish() {
      sampling = false;
      await sampler;
      const qoe = await page.evaluate(() => window.sammy?.qoe() ?? null).catch(() => null);
      const playerConfig = await page.evaluate(() => window.sammy?.config() ?? null).catch(() => null);
      const storageState = await context.storageState().catch(() => undefined);
      await context.close();
      return { arm: o.arm, url, originMs, playbackStartMs, qoe: qoe as SessionQoE | null, playerConfig, buffer, pageErrors, storageState };
    },
  };
}
