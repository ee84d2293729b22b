/**
 * Checks every player spec makes of a session against the real server: what went on
 * the wire, what the server's telemetry log says it applied, and what the page was
 * told (`Server-Timing`). The server runs with its defaults (rates clamped to
 * [min, max], the spiral guard on), read from `@sammy/server/options`.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildPlayer } from '@sammy/player/build';
import { expect, test } from '@playwright/test';
import type { Browser } from 'playwright-core';
import type { SessionQoE } from '@sammy/player/abr';
import { readRateRequest } from '@sammy/server/cmcd';
import { DEFAULT_SERVER_OPTIONS } from '@sammy/server/options';
import { CMCDHeaderValidator } from '@montevideo-tech/cmcd-validator';
import { CMCD_HEADERS } from '@sammy/player/cmcd-status';
import { guardFloor } from '@sammy/server/spiral-guard';
import { chromiumUnavailableReason } from '../src/browser.js';
import { ensureLabMedia, mediaDirFor, type LabMedia } from '../src/lab/media.js';
import type { PlayerSession, SessionRun, WireRequest } from '../src/player-loopback.js';

/** Why a player spec cannot run here: no Chromium, or no ffmpeg to encode the fixture (unless it is cached). */
export function loopbackUnavailableReason(fixtureS: number): string | null {
  const chromium = chromiumUnavailableReason();
  if (chromium) return chromium;
  const cached = existsSync(join(mediaDirFor('lab', fixtureS), 'segments.json'));
  if (!cached && spawnSync('ffmpeg', ['-version'], { stdio: 'ignore' }).status !== 0) return 'ffmpeg not found, needed to encode the test video (sudo apt-get install -y ffmpeg)';
  return null;
}

/** A player spec's fixture: the lab's short video (encoded once, cached) and a work folder with the demo page built into `player/`. */
export async function playerFixture(fixtureS: number, prefix: string): Promise<{ media: LabMedia; workDir: string; playerDir: string }> {
  const media = await ensureLabMedia('lab', fixtureS, (line) => console.log(line));
  const workDir = mkdtempSync(join(tmpdir(), prefix));
  const playerDir = join(workDir, 'player');
  await buildPlayer(playerDir);
  return { media, workDir, playerDir };
}

/**
 * The hooks of a player spec's describe block: each test skips with the printed reason
 * when the spec cannot run here, and at the end the browser closes and the work folder goes.
 */
export function closeAndSkipHooks(reason: string | null, resources: () => { browser?: Browser; workDir?: string }): void {
  test.afterAll(async () => {
    const { browser, workDir } = resources();
    await browser?.close();
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  });
  test.beforeEach(() => {
    if (reason) console.log(`SKIP: ${reason}`);
    test.skip(reason !== null, reason ?? '');
  });
}

export function printTimeline(label: string, qoe: SessionQoE): void {
  console.log(`${label} video chunks: t_request_s index rung phase buffer_before_s rtp_kbps applied_kbps measured_kbps`);
  for (const c of qoe.chunks) {
    const cells = [c.requestS?.toFixed(2), c.index, c.rung, c.phase, c.bufferBeforeS.toFixed(2), c.rtpKbps, c.appliedRateKbps, c.throughputKbps.toFixed(0)];
    console.log(`  ${cells.map((x) => String(x).padStart(7)).join(' ')}`);
  }
}

export const isSegment = (path: string) => /\/(chunk|init)-\d+(-\d+)?\.m4s$/.test(path);

function member(headers: Record<string, string>, header: string, key: string): number | null {
  const m = new RegExp(`(?:^|,)\\s*${key}=(\\d+)`).exec(headers[header] ?? '');
  return m ? Number(m[1]) : null;
}

/** CMCD `rtp` as sent (CMCD-Status). */
export const rtpOfHeader = (headers: Record<string, string>): number | null => member(headers, 'cmcd-status', 'rtp');
/** CMCD `tb` as sent (dash.js writes it in CMCD-Object). */
export const tbOfHeader = (headers: Record<string, string>): number | null => member(headers, 'cmcd-object', 'tb');
/** CMCD `br` as sent (CMCD-Object). */
export const brOfHeader = (headers: Record<string, string>): number | null => member(headers, 'cmcd-object', 'br');

const clampKbps = (kbps: number) => Math.min(DEFAULT_SERVER_OPTIONS.maxRateKbps, Math.max(DEFAULT_SERVER_OPTIONS.minRateKbps, kbps));

/** The spiral guard's floor for what a request sent, by the server's own reader and rule (null: no rtp, or nothing to floor it on). */
export function guardFloorKbps(headers: Record<string, string>): number | null {
  const request = readRateRequest(headers, '', DEFAULT_SERVER_OPTIONS.limits.maxCmcdBytes);
  if (request.rtpKbps === null) return null;
  return guardFloor(request, DEFAULT_SERVER_OPTIONS.spiralGuardMultiplier)?.floorKbps ?? null;
}

/** The segment requests on the wire, by path, in order (a path can be fetched more than once). */
function wireByPath(session: PlayerSession): Map<string, WireRequest[]> {
  const byPath = new Map<string, WireRequest[]>();
  for (const w of session.wire.filter((x) => isSegment(x.path))) byPath.set(w.path, [...(byPath.get(w.path) ?? []), w]);
  return byPath;
}

/**
 * The server applied what each request asked for (raised to the spiral guard's floor
 * when below it, then clamped), its log says so, and so did the `Server-Timing` header
 * Chromium received, and the one the page recorded in its chunk records. The n-th log
 * line of a path is the n-th request for it. Returns how many responses the guard raised.
 */
export function expectServerApplied(r: SessionRun): number {
  const sent = wireByPath(r.session);
  const lines = r.log.filter((l) => isSegment(l.path));
  expect(lines.length).toBeGreaterThanOrEqual(r.session.wire.filter((x) => isSegment(x.path)).length - 2); // one still in flight at the end may be cut
  const seen = new Map<string, number>();
  let raised = 0;
  for (const l of lines) {
    const n = seen.get(l.path) ?? 0;
    seen.set(l.path, n + 1);
    expect(sent.get(l.path)?.length ?? 0, `${l.path} (#${n + 1}) in the log was sent by the page`).toBeGreaterThan(n);
    const w = sent.get(l.path)![n]!;
    const rtp = rtpOfHeader(w.headers);
    const floor = guardFloorKbps(w.headers);
    expect(l.rtpKbps, l.path).toBe(rtp);
    expect(l.guardFloorKbps, l.path).toBe(floor);
    expect(l.guardRaised, l.path).toBe(floor !== null && floor > rtp!);
    expect(l.appliedRateKbps, l.path).toBe(rtp === null ? null : clampKbps(Math.max(rtp, floor ?? 0)));
    expect(l.pacing, l.path).toBe(rtp === null ? 'unpaced' : 'paced');
    if (!l.aborted) expect(w.serverTiming, `Server-Timing of ${l.path}`).toBe(`pace;dur=${l.appliedRateKbps ?? 0};desc="${l.pacing}"`);
    if (l.guardRaised) raised++;
  }
  // Server-Timing, as the page recorded it, against the log (unique chunk paths only).
  const once = new Map(lines.filter((l) => sent.get(l.path)!.length === 1).map((l) => [l.path, l]));
  for (const c of r.session.qoe.chunks) {
    const line = once.get(`/media/chunk-${c.rung}-${String(c.index + 1).padStart(5, '0')}.m4s`);
    if (line) expect(c.appliedRateKbps, `Server-Timing of ${line.path} as recorded`).toBe(line.appliedRateKbps);
  }
  return raised;
}

/** A video chunk's rung and 1-based segment number from its path (`/media/chunk-R-NNNNN.m4s`); null for audio (rung >= videoRungs) and other files. */
export function videoChunkOf(path: string, videoRungs: number): { rung: number; segment: number } | null {
  const m = /\/chunk-(\d+)-(\d+)\.m4s$/.exec(path);
  return m && Number(m[1]) < videoRungs ? { rung: Number(m[1]), segment: Number(m[2]) } : null;
}

/**
 * The segment requests whose CMCD headers the CTA-5004 validator
 * (`@montevideo-tech/cmcd-validator`) finds invalid, with its errors; `sammy-floor`, the
 * player's declared floor, is declared to it as the custom number key it is. The
 * validator logs every step to the console: silenced while it runs.
 */
export function invalidCmcdRequests(wire: readonly WireRequest[]): { path: string; errors: string[] }[] {
  const invalid: { path: string; errors: string[] }[] = [];
  const config = { customKey: [{ key: 'sammy-floor', type: 'number' as const, headerType: 'CMCD-Status' }] };
  for (const w of wire.filter((x) => isSegment(x.path))) {
    const lines = CMCD_HEADERS.filter((name) => w.headers[name.toLowerCase()] !== undefined).map((name) => `${name}: ${w.headers[name.toLowerCase()]}`);
    if (lines.length === 0) continue;
    const saved = { ...console };
    for (const k of ['log', 'info', 'debug', 'trace', 'warn', 'error'] as const) console[k] = () => {};
    let result: { valid: boolean; errors: { type: string; key?: string; description?: string }[] };
    try {
      result = CMCDHeaderValidator(`GET ${w.path} HTTP/1.1\n${lines.join('\n')}\n`, config, false);
    } finally {
      Object.assign(console, saved);
    }
    if (!result.valid) invalid.push({ path: w.path, errors: result.errors.map((e) => `${e.type} ${e.key ?? ''}: ${e.description ?? ''}`) });
  }
  return invalid;
}

