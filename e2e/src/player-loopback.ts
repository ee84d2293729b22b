/**
 * The player page against the real server over plain loopback (no namespaces, no
 * shaping): one server per session, so each session has its own telemetry log.
 */
import type { Browser, Page, Request } from 'playwright-core';
import { startServer, stop, type Managed } from '@sammy/server/process';
import { readTelemetry, type ResponseTelemetry } from '@sammy/server/telemetry';
import type { Arm, PlayerName, SessionQoE } from '@sammy/player/abr';
import { REPO_DIR } from './paths.js';

export interface LoopbackServer {
  url: string;
  logFile: string;
  process: Managed;
}

export interface LoopbackServerOptions {
  mediaDir: string;
  playerDir: string;
  logFile: string;
  /** More server options, e.g. `['--spiral-guard', 'off']`. */
  extraArgs?: string[];
}

export async function startLoopbackServer(o: LoopbackServerOptions): Promise<LoopbackServer> {
  // One process (not one per core): the session's telemetry is one process's log, and
  // the sessions stay comparable with the lab's.
  const args = ['--media', o.mediaDir, '--player', o.playerDir, '--host', '127.0.0.1', '--port', '0', '--workers', '1', '--log', o.logFile, '--log-level', 'warn', ...(o.extraArgs ?? [])];
  const s = await startServer({ args, cwd: REPO_DIR });
  return { url: s.url, logFile: o.logFile, process: s.process };
}

/** Stops the server (it writes the lines of responses still in flight on close) and reads its log. */
export async function stopLoopbackServer(s: LoopbackServer): Promise<ResponseTelemetry[]> {
  await stop(s.process);
  return readTelemetry(s.logFile);
}

/** A segment request as the page recorded it (`window.sammy.requests()`). */
export interface PageRequest {
  path: string;
  mediaType: string;
  type: string;
  phase: 'initial' | 'playing';
  rtpKbps: number | null;
  t: number;
}

/** The page's `window.sammy` beyond what the lab uses (player README). */
interface PageApiExtras {
  stop(): SessionQoE;
  requests(): PageRequest[];
  history(): number[] | null;
}

/** A media request as Chromium sent it, and the Server-Timing of its response. */
export interface WireRequest {
  path: string;
  query: string;
  headers: Record<string, string>;
  /** The response's `Server-Timing` header; null when it had none or no response came (the session was stopped). */
  serverTiming: string | null;
  /** When the page sent it, ms since the session began. */
  sentMs: number;
}

/** A media request that failed in the browser (an abort, a reset), as Chromium reported it. */
export interface FailedRequest {
  path: string;
  /** When it failed, ms since the session began. */
  failedMs: number;
  /** Chromium's reason, e.g. `net::ERR_ABORTED`. */
  errorText: string;
}

/**
 * A player page under test: where it is, and how the test reaches into it. Every
 * function runs inside the page (Playwright serialises it), so it may use only what
 * the page itself offers.
 */
export interface PageUnderTest {
  /** Path and query to load. */
  path: string;
  /** Freezes the session's QoE and stops the player (no request leaves afterwards); returns the QoE. */
  stop: () => SessionQoE;
  /** Every segment request the page sent, as it recorded them. */
  requests: () => PageRequest[];
  /** Path of a page of the same origin that does not play, and how it reads the device history there (none: not read). */
  history?: { path: string; read: () => Promise<number[] | null> };
}

/** The demo page (player/src/app/) with a player, an arm and a config, driven through `window.sammy`. */
export function demoPage(arm: Arm, config: Record<string, unknown>, player: PlayerName = 'dashjs'): PageUnderTest {
  return demoPageAt(`player=${player}&arm=${arm}&config=${encodeURIComponent(JSON.stringify(config))}`);
}

/** The demo page with any URL parameters (player README, "The page"). */
export function demoPageAt(query: string): PageUnderTest {
  return {
    path: `/?${query}`,
    stop: () => (window.sammy as unknown as PageApiExtras).stop(),
    requests: () => (window.sammy as unknown as PageApiExtras).requests(),
    history: {
      path: `/?${query}&autoplay=0`,
      read: async () => {
        await window.sammy!.ready;
        return (window.sammy as unknown as PageApiExtras).history();
      },
    },
  };
}

export interface PlayerSession {
  arm: Arm;
  qoe: SessionQoE;
  requests: PageRequest[];
  wire: WireRequest[];
  failed: FailedRequest[];
  /** The device history after the session, read from a fresh page of the same browser context (null if the page under test has none). */
  historyAfter: number[] | null;
  pageErrors: string[];
  elapsedS: number;
}

export async function runPlayerSession(
  browser: Browser,
  o: {
    baseUrl: string;
    /** The demo page's `?player=` (default dash.js). */
    player?: PlayerName;
    arm: Arm;
    config: Record<string, unknown>;
    playS: number;
    startupTimeoutS?: number;
    /** Runs after the first frame (seek, throttle, ...), before the `playS` wait. */
    act?: (page: Page) => Promise<void>;
    /** Runs before the page is opened (e.g. network emulation from its first byte). */
    beforeOpen?: (page: Page) => Promise<void>;
    /** The page to play in (default: the demo page with `player`, `arm` and `config`). */
    page?: PageUnderTest;
  },
): Promise<PlayerSession> {
  const under = o.page ?? demoPage(o.arm, o.config, o.player);
  const t0 = Date.now();
  const context = await browser.newContext();
  const page = await context.newPage();
  const pageErrors: string[] = [];
  page.on('pageerror', (err) => pageErrors.push(err.message));
  page.on('console', (msg) => {
    if (msg.type() === 'error') pageErrors.push(`console: ${msg.text()}`);
  });
  const pending: Promise<void>[] = [];
  const wire: WireRequest[] = [];
  const failed: FailedRequest[] = [];
  page.on('requestfailed', (r: Request) => {
    const u = new URL(r.url());
    if (u.pathname.startsWith('/media/')) failed.push({ path: u.pathname, failedMs: Date.now() - t0, errorText: r.failure()?.errorText ?? '' });
  });
  page.on('request', (r: Request) => {
    const u = new URL(r.url());
    if (!u.pathname.startsWith('/media/')) return;
    const sentMs = Date.now() - t0;
    const serverTiming = r
      .response()
      .then((res) => res?.headerValue('server-timing') ?? null)
      .catch(() => null);
    pending.push(Promise.all([r.allHeaders(), serverTiming]).then(([headers, st]) => void wire.push({ path: u.pathname, query: u.search, headers, serverTiming: st, sentMs })));
  });
  try {
    await o.beforeOpen?.(page);
    await page.goto(`${o.baseUrl}${under.path}`, { waitUntil: 'load' });
    await page.waitForFunction(() => typeof window.sammy?.qoe().playDelayS === 'number', undefined, { polling: 50, timeout: (o.startupTimeoutS ?? 20) * 1000 });
    await o.act?.(page);
    await page.waitForTimeout(o.playS * 1000);
    // stop() freezes the QoE and stops the player: every request the page made has
    // had its 'request' event by the time it returns, and none follows, so the wire
    // list is complete before the server log is compared with it.
    const qoe = await page.evaluate(under.stop);
    const requests = await page.evaluate(under.requests);
    await Promise.all(pending);
    // The history lives in localStorage: a second page of the same context sees it.
    let historyAfter: number[] | null = null;
    if (under.history) {
      const second = await context.newPage();
      await second.goto(`${o.baseUrl}${under.history.path}`, { waitUntil: 'load' });
      historyAfter = await second.evaluate(under.history.read);
    }
    return { arm: o.arm, qoe, requests, wire, failed, historyAfter, pageErrors, elapsedS: (Date.now() - t0) / 1000 };
  } finally {
    await context.close();
  }
}

export interface SessionRun {
  session: PlayerSession;
  log: ResponseTelemetry[];
}

/** One session on a server of its own (so it has its own telemetry log), which is stopped and read afterwards. */
export async function runOnOwnServer(
  browser: Browser,
  server: LoopbackServerOptions,
  session: (baseUrl: string) => Parameters<typeof runPlayerSession>[1],
): Promise<SessionRun> {
  const s = await startLoopbackServer(server);
  let result: PlayerSession;
  try {
    result = await runPlayerSession(browser, session(s.url));
  } catch (err) {
    await stopLoopbackServer(s);
    throw err;
  }
  return { session: result, log: await stopLoopbackServer(s) };
}
