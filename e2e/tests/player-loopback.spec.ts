/**
 * The player page (player/) against the real server (server/) over plain loopback,
 * one session per arm, on a 24 s lab ladder (top rung 1.05 Mbps) with a 12 s buffer
 * target so a short session covers both ends of the pace range:
 * - every arm starts playing, with CMCD in headers (never in the query);
 * - sammy, on each player (dash.js, Shaka, hls.js over the HLS playlists): no rtp while
 *   the first frame is awaited, an rtp on every segment request after it, each within
 *   [2.9x, 11x] of the top bitrate (or at the Eq. 2.1 floor), equal to what the core
 *   computes from the recorded buffer, and the server applied exactly those rates (its
 *   log and its Server-Timing header), the spiral guard never raising one;
 * - control (each player's own ABR) sends no rtp; on dash.js, fixed4x sends 4x the top
 *   bitrate and dashjs-rtp dash.js's own, which the server's spiral guard raises to
 *   2.5x the top bitrate;
 * - a chunk given up (Sammy's stalled-download rule, dash.js's AbandonRequestsRule in
 *   control) is aborted, and only its refetch becomes a record.
 */
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import type { Browser } from 'playwright-core';
import { DEFAULT_SAMMY_CONFIG, ladderFromSidecar, paceFor, PLAYERS, resolveSammyConfig, roundRtpKbps, type Arm } from '@sammy/player/abr';
import { launchChromium } from '../src/browser.js';
import type { LabMedia } from '../src/lab/media.js';
import { runOnOwnServer, runPlayerSession, type SessionRun } from '../src/player-loopback.js';
import { closeAndSkipHooks, expectServerApplied, isSegment, loopbackUnavailableReason, playerFixture, printTimeline, rtpOfHeader, videoChunkOf } from './player-checks.js';

const FIXTURE_S = 24;

const reason = loopbackUnavailableReason(FIXTURE_S);
const MAX_BUFFER_S = 12;
const CONFIG = { maxBufferS: MAX_BUFFER_S };
const PLAY_S: Partial<Record<Arm, number>> = { sammy: 14, control: 5, fixed4x: 5, 'dashjs-rtp': 5 };

let media: LabMedia;
let workDir: string;
let browser: Browser;
const runs = new Map<string, SessionRun>();
let topKbps: number;

/** One session on its own server (cached by `key`, so each test reads the same run). */
async function run(
  arm: Arm,
  key: string = arm,
  extra: Partial<Pick<Parameters<typeof runPlayerSession>[1], 'player' | 'config' | 'playS' | 'act' | 'beforeOpen'>> = {},
  serverArgs: string[] = [],
): Promise<SessionRun> {
  const cached = runs.get(key);
  if (cached) return cached;
  const r = await runOnOwnServer(browser, { mediaDir: media.dir, playerDir: join(workDir, 'player'), logFile: join(workDir, `${key}.jsonl`), extraArgs: serverArgs }, (baseUrl) => ({
    baseUrl,
    arm,
    config: CONFIG,
    playS: PLAY_S[arm] ?? 5,
    ...extra,
  }));
  runs.set(key, r);
  console.log(`${key}: session ${r.session.elapsedS.toFixed(1)} s, play delay ${r.session.qoe.playDelayS?.toFixed(3)} s, ${r.session.qoe.chunks.length} video chunks`);
  return r;
}

/** Every arm: playback starts; CMCD travels in headers, never in the query; the page saw no error. */
function expectCommon(r: SessionRun): void {
  const { session } = r;
  expect(session.pageErrors).toEqual([]);
  expect(session.qoe.playDelayS).toBeGreaterThan(0);
  expect(session.qoe.chunks.length).toBeGreaterThan(2);
  const segments = session.wire.filter((w) => isSegment(w.path));
  expect(segments.length).toBeGreaterThan(4);
  for (const w of session.wire) expect(w.query, w.path).not.toMatch(/CMCD=/i);
  // The player's other CMCD keys are kept: bitrate and session id on every media segment.
  for (const w of segments.filter((s) => s.path.includes('/chunk-'))) {
    expect(w.headers['cmcd-object'], w.path).toMatch(/br=/);
    expect(w.headers['cmcd-session'], w.path).toMatch(/sid=/);
  }
}

test.describe.serial('player over loopback, every arm', () => {
  test.beforeAll(async ({}, info) => {
    if (reason) return;
    info.setTimeout(5 * 60_000);
    const t0 = Date.now();
    ({ media, workDir } = await playerFixture(FIXTURE_S, 'sammy-player-e2e-'));
    topKbps = media.sidecar.representations.at(-1)!.bitrateKbps;
    browser = await launchChromium();
    console.log(`fixture and build: ${((Date.now() - t0) / 1000).toFixed(1)} s (top rung ${topKbps} kbps, ${media.dir})`);
  });

  closeAndSkipHooks(reason, () => ({ browser, workDir }));

  for (const player of PLAYERS) {
    /** dash.js's runs keep the plain arm names they always had. */
    const runOn = (arm: Arm, key?: string, extra: Parameters<typeof run>[2] = {}) =>
      player === 'dashjs' ? run(arm, key === undefined ? arm : `${arm}-${key}`, extra) : run(arm, `${player}-${arm}${key === undefined ? '' : `-${key}`}`, { player, ...extra });
    const label = (arm: Arm) => (player === 'dashjs' ? arm : `${player} ${arm}`);

    test(`${label('sammy')}: unpaced until the first frame, then an rtp on every segment request`, async () => {
      const r = await runOn('sammy');
      expectCommon(r);
      const { requests, qoe } = r.session;
      const initial = requests.filter((q) => q.phase === 'initial');
      const playing = requests.filter((q) => q.phase === 'playing');
      expect(initial.length).toBeGreaterThan(0);
      expect(playing.filter((q) => q.mediaType === 'video' && q.type === 'MediaSegment').length).toBeGreaterThanOrEqual(6);
      for (const q of initial) expect(q.rtpKbps, `${q.path} (initial phase)`).toBeNull();
      for (const q of playing) expect(q.rtpKbps, `${q.path} (playing phase)`).not.toBeNull();
      // What the page says it sent is what went on the wire.
      const wire = new Map(r.session.wire.map((w) => [w.path, rtpOfHeader(w.headers)]));
      for (const q of requests) expect(wire.get(q.path), q.path).toBe(q.rtpKbps);
      // The chunk records agree on phase and rtp.
      for (const c of qoe.chunks) expect(c.rtpKbps === null, `chunk ${c.index}`).toBe(c.phase === 'initial');

      printTimeline(label('sammy'), qoe);
      const { chunks: _chunks, config: _config, ...summary } = qoe;
      console.log(`${label('sammy')} QoE: ${JSON.stringify(summary)}`);
      expect(qoe.config).toMatchObject({ player, arm: 'sammy' });
    });

    test(`${label('sammy')}: every rtp lies in [2.9x, 11x] of the top bitrate (or at the floor) and is what the core computes`, async () => {
      const { session } = await runOn('sammy');
      const low = DEFAULT_SAMMY_CONFIG.paceFullMultiplier * topKbps;
      const high = roundRtpKbps(DEFAULT_SAMMY_CONFIG.paceEmptyMultiplier * topKbps);
      for (const q of session.requests.filter((x) => x.rtpKbps !== null)) {
        expect(q.rtpKbps!, q.path).toBeLessThanOrEqual(high);
        expect(q.rtpKbps!, q.path).toBeGreaterThanOrEqual(low);
      }
      const ladder = ladderFromSidecar(media.sidecar);
      const cfg = resolveSammyConfig(CONFIG);
      const paced = session.qoe.chunks.filter((c) => c.rtpKbps !== null);
      for (const c of paced) {
        const expected = paceFor(ladder, cfg, { bufferS: c.bufferBeforeS, segmentIndex: c.index, maxRung: ladder.bitratesKbps.length - 1 });
        expect(c.rtpKbps, `chunk ${c.index} at ${c.bufferBeforeS.toFixed(2)} s`).toBe(expected.rtpKbps);
        // At these defaults the floor stays below 2.9x: the buffer-based rate sets every pace.
        expect(c.paceFloorKbps!).toBeLessThan(low);
      }
      // The pace falls as the buffer fills: of any two paced chunks whose buffers differ by
      // more than half a second, the emptier one got the higher (or equal) rate, and the
      // fullest buffer's rate is near 2.9x. How the buffers spread depends on how many
      // chunks the unpaced initial phase fetched before the first frame (1 to 5 on
      // loopback: with 5 the buffer is already near full and every paced chunk sits
      // within half a second of it), so no spread is required; each chunk's exact rate is
      // checked above against the core.
      const byBuffer = [...paced].sort((a, b) => a.bufferBeforeS - b.bufferBeforeS);
      let pairs = 0;
      for (const emptier of byBuffer) {
        for (const fuller of byBuffer.filter((c) => c.bufferBeforeS > emptier.bufferBeforeS + 0.5)) {
          pairs++;
          expect(emptier.rtpKbps!, `chunk ${emptier.index} vs ${fuller.index}`).toBeGreaterThanOrEqual(fuller.rtpKbps!);
        }
      }
      const fullest = byBuffer[byBuffer.length - 1]!;
      console.log(`${label('sammy')}: ${pairs} chunk pairs more than 0.5 s of buffer apart; fullest buffer ${fullest.bufferBeforeS.toFixed(2)} s at rtp ${fullest.rtpKbps}`);
      expect(fullest.rtpKbps!).toBeLessThan(5 * topKbps);
    });

    test(`${label('sammy')}: the server applied the same rates (its log and Server-Timing)`, async () => {
      const r = await runOn('sammy');
      // The spiral guard never changes a Sammy request: each declares its own floor (sammy-floor), at most its rtp.
      expect(expectServerApplied(r)).toBe(0);
      // Every paced media segment declares the floor its rtp was computed with: the guard took it, and stayed at or below the rtp.
      const pacedChunks = r.log.filter((l) => l.pacing === 'paced' && l.path.includes('/chunk-'));
      for (const l of pacedChunks) {
        expect(l.guardBasis, l.path).toBe('sammy-floor');
        expect(l.guardFloorKbps!, l.path).toBeLessThanOrEqual(l.rtpKbps!);
      }
      expect(r.log.filter((l) => l.pacing === 'paced').length).toBeGreaterThanOrEqual(6);
      expect(r.session.qoe.chunks.filter((c) => c.phase === 'playing').every((c) => c.appliedRateKbps === c.rtpKbps)).toBe(true);
    });

    test(`${label('sammy')}: the initial-phase throughput is stored in the history, and only that`, async () => {
      const { session } = await runOn('sammy');
      expect(session.historyAfter).toHaveLength(1);
      const initial = session.qoe.chunks.filter((c) => c.phase === 'initial');
      expect(initial.length).toBeGreaterThan(0);
      // Recorded at the first frame, from the initial chunks finished by then: never above their aggregate's range.
      const kbps = initial.map((c) => c.throughputKbps);
      expect(session.historyAfter![0]).toBeGreaterThanOrEqual(Math.min(...kbps) * 0.999);
      expect(session.historyAfter![0]).toBeLessThanOrEqual(Math.max(...kbps) * 1.001);
    });

    test(`${label('control')}: the player's own ABR, no rtp anywhere`, async () => {
      const r = await runOn('control');
      expectCommon(r);
      for (const w of r.session.wire) expect(rtpOfHeader(w.headers), w.path).toBeNull();
      for (const c of r.session.qoe.chunks) expect(c.rtpKbps).toBeNull();
      expectServerApplied(r);
      expect(r.log.every((l) => l.pacing === 'unpaced')).toBe(true);
      expect(r.session.qoe.config).toMatchObject({ player, arm: 'control' });
    });

  }

  test('fixed4x: rtp = 4x the top bitrate on every segment request', async () => {
    const r = await run('fixed4x');
    expectCommon(r);
    const expected = roundRtpKbps(4 * topKbps, 100);
    for (const w of r.session.wire.filter((x) => isSegment(x.path))) expect(rtpOfHeader(w.headers), w.path).toBe(expected);
    expectServerApplied(r);
  });

  test("dashjs-rtp: dash.js's own CMCD rtp, in headers, applied by the server", async () => {
    const r = await run('dashjs-rtp');
    expectCommon(r);
    const media = r.session.wire.filter((x) => x.path.includes('/chunk-'));
    expect(media.every((w) => rtpOfHeader(w.headers) !== null)).toBe(true);
    // dash.js's rtp follows the current bitrate and falls as the buffer grows: the spiral
    // guard raises it to 2.5x the top bitrate it sends.
    const raised = expectServerApplied(r);
    console.log(`dashjs-rtp: the spiral guard raised ${raised} of ${r.log.filter((l) => l.pacing === 'paced').length} paced responses`);
    expect(raised).toBeGreaterThan(0);
  });

  test('sammy: a seek to an unbuffered position restarts the unpaced initial phase until the next frame', async () => {
    const SEEK_TO_S = 16; // segment 9; a 4 s buffer target keeps it unbuffered
    const r = await run('sammy', 'sammy-seek', {
      config: { maxBufferS: 4 },
      playS: 4,
      act: async (page) => {
        await page.waitForTimeout(2000);
        await page.evaluate((t) => void ((document.querySelector('video') as HTMLVideoElement).currentTime = t), SEEK_TO_S);
      },
    });
    expect(r.session.pageErrors).toEqual([]);
    const video = r.session.requests.filter((q) => q.mediaType === 'video' && q.type === 'MediaSegment');
    const number = (q: { path: string }) => Number(/-(\d+)\.m4s$/.exec(q.path)![1]);
    const before = video.filter((q) => number(q) < 9);
    const after = video.filter((q) => number(q) >= 9);
    expect(before.some((q) => q.phase === 'playing' && q.rtpKbps !== null)).toBe(true);
    expect(after.length).toBeGreaterThanOrEqual(2);
    expect(after[0]).toMatchObject({ phase: 'initial', rtpKbps: null });
    expect(after.at(-1)!.phase).toBe('playing');
    expect(after.at(-1)!.rtpKbps).not.toBeNull();
    for (const q of r.session.requests) expect(q.rtpKbps === null, q.path).toBe(q.phase === 'initial');
    expect(r.session.qoe.rebufferCount).toBe(0); // waiting for a seek is not a rebuffer
    expect(r.session.historyAfter).toHaveLength(1); // written once, at the first startup
    expectServerApplied(r);
  });

  test("sammy: the play delay counts from when the page's player library has loaded, not from the page's start", async () => {
    // 2 Mbit/s from the page's first byte: the demo page imports dash.js on demand, which
    // takes seconds at this rate, and a site ships its player with the page.
    const r = await run('sammy', 'sammy-slow-page', {
      playS: 2,
      beforeOpen: async (page) => {
        const cdp = await page.context().newCDPSession(page);
        await cdp.send('Network.enable');
        await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: 250_000, uploadThroughput: -1 });
      },
    });
    const first = r.session.qoe.chunks.find((c) => c.index === 0)!;
    console.log(`slow page: play delay ${r.session.qoe.playDelayS!.toFixed(2)} s, first video request ${first.requestS!.toFixed(2)} s after the play request, session ${r.session.elapsedS.toFixed(1)} s`);
    expect(r.session.pageErrors).toEqual([]);
    // What comes after the library: the MPD, segments.json, the init segments, then the first chunk.
    expect(first.requestS!).toBeLessThan(1.5);
  });

  test('sammy: on a server that paces at most 200 kbit/s, the stalled-download rule gives up a top-rung chunk in flight and dash.js aborts it and fetches the segment lower', async () => {
    // The initial phase is unpaced (the server caps only what it paces), so the estimate
    // starts high and HYB asks for the top rung (1.6-2.8 Mbit per chunk: 8-14 s at 200 kbit/s)
    // with at most 8 s buffered: the rule must give it up (docs/algorithm.md, "A stalled download").
    // (At 400 kbit/s a small top-rung chunk asked for with 8 s buffered was not stalled.)
    // One-packet bursts, timed by the server: Linux never paces a connection's first 10
    // segments, 640 KB on loopback (whole chunks), and kernel-paced 64 KB packets leave
    // 2.6 s apart at 200 kbit/s. dash.js asks the rule only when bytes arrive, so a chunk
    // that came partly unpaced and then in one more lump gave the rule no report between
    // its 2 s wait and the chunk's end (1 CI run in 4). Bursts the server times arrive
    // every 1.3 s from the first byte (32 KB here), as a real link's would, only coarser.
    const r = await run('sammy', 'sammy-stall', { playS: 14 }, ['--max-rate-kbps', '200', '--burst-packets', '1']);
    const { qoe, wire } = r.session;
    expect(r.session.pageErrors).toEqual([]);
    printTimeline('stall session', qoe);
    const refetched = qoe.chunks.filter((c) => (c.abandonedBytes ?? 0) > 0);
    expect(refetched.length).toBeGreaterThan(0);
    for (const c of refetched) {
      // The given-up request went out on the wire at a higher rung, for the same segment.
      const given = wire
        .map((w) => videoChunkOf(w.path, media.videoRungs))
        .filter((v) => v !== null && v.segment === c.index + 1)
        .map((v) => v!.rung);
      const top = Math.max(...given);
      const server = r.log.filter((l) => l.path.endsWith(`/chunk-${top}-${String(c.index + 1).padStart(5, '0')}.m4s`));
      console.log(`segment ${c.index}: requested at rungs ${given.join(', ')}; the server's lines for rung ${top}: ${JSON.stringify(server.map((l) => ({ bytes: l.bytes, aborted: l.aborted })))}`);
      expect(top, `segment ${c.index}: ${given.join(', ')}`).toBeGreaterThan(c.rung);
      expect(c.abandonedBytes!).toBeLessThan(media.sidecar.representations[top]!.segmentSizesBytes[c.index]!);
      // The request given up was aborted (the client closed it before the response's end; the
      // server's byte count is what it handed the kernel, near all of it), not downloaded beside its refetch.
      expect(server).toHaveLength(1);
      expect(server[0]!.aborted).toBe(true);
      // Only the refetch became a chunk record, and its reason is the rule's verdict for its rung.
      expect(qoe.chunks.filter((x) => x.index === c.index)).toHaveLength(1);
      expect(c.reason).toMatch(new RegExp(`^stalled: rung ${top} chunk ${c.index} .*: refetch at rung ${c.rung}$`));
    }
    // Playback went on past the segment given up.
    expect(Math.max(...qoe.chunks.map((c) => c.index))).toBeGreaterThan(refetched[0]!.index);
  });

  test("control: when the link falls under a top-rung chunk, dash.js's own AbandonRequestsRule gives it up and the request is aborted then, not at the session's end", async () => {
    const r = await run('control', 'control-abandon', {
      playS: 12,
      act: async (page) => {
        // The buffer fills at the top rung over loopback; then Chromium's network emulation
        // cuts the link to 100 kbit/s, under which a top-rung chunk would take about 20 s.
        await page.waitForFunction(() => (window.sammy?.qoe().chunks.length ?? 0) >= 5, undefined, { polling: 100, timeout: 20_000 });
        const cdp = await page.context().newCDPSession(page);
        await cdp.send('Network.enable');
        await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: 12_500, uploadThroughput: -1 });
      },
    });
    const { qoe, wire, failed } = r.session;
    expect(r.session.pageErrors).toEqual([]);
    printTimeline('control abandon session', qoe);
    const video = wire.filter((w) => videoChunkOf(w.path, media.videoRungs) !== null).sort((a, b) => a.sentMs - b.sentMs);
    const segmentOf = (path: string) => videoChunkOf(path, media.videoRungs)!.segment;
    const twice = [...new Set(video.map((w) => segmentOf(w.path)))].filter((seg) => video.filter((w) => segmentOf(w.path) === seg).length > 1);
    console.log(`segments requested twice: ${JSON.stringify(twice)}; failed media requests: ${JSON.stringify(failed)}`);
    expect(twice.length).toBeGreaterThan(0);
    for (const seg of twice) {
      const [givenUp, refetch] = video.filter((w) => segmentOf(w.path) === seg);
      const abort = failed.find((f) => f.path === givenUp!.path);
      // The request given up failed as an abort within a second of its refetch going out
      // (with dash.js 5.2.1's own abort it ran on, throttled, beside the refetch).
      expect(abort?.errorText, givenUp!.path).toBe('net::ERR_ABORTED');
      expect(Math.abs(abort!.failedMs - refetch!.sentMs), givenUp!.path).toBeLessThan(1000);
      // Only the refetch became a chunk record.
      expect(qoe.chunks.filter((c) => c.index === seg - 1)).toHaveLength(1);
    }
  });

  test('sammy: after a rebuffer it stays in the playing phase and keeps pacing, at the empty-buffer end of the range', async () => {
    const r = await run('sammy', 'sammy-rebuffer', {
      config: { maxBufferS: 4 },
      playS: 3,
      act: async (page) => {
        // Chromium's network emulation: 50 kbit/s, a third of the lowest rung, so even the
        // stalled-download rule's refetch at the lowest rung cannot keep the buffer.
        const cdp = await page.context().newCDPSession(page);
        await cdp.send('Network.enable');
        await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: 6_250, uploadThroughput: -1 });
        await page.waitForFunction(() => (window.sammy?.qoe().rebufferCount ?? 0) > 0, undefined, { polling: 100, timeout: 30_000 });
        await page.waitForTimeout(2000);
        await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
      },
    });
    const { qoe, requests } = r.session;
    expect(r.session.pageErrors).toEqual([]);
    expect(qoe.rebufferCount).toBeGreaterThanOrEqual(1);
    expect(qoe.rebufferS).toBeGreaterThan(0);
    const firstPlaying = requests.findIndex((q) => q.phase === 'playing');
    const afterStart = requests.slice(firstPlaying);
    expect(afterStart.length).toBeGreaterThan(3);
    for (const q of afterStart) expect(q.rtpKbps, `${q.path} after startup`).not.toBeNull();
    // Near an empty buffer the pace is near 11x the top bitrate.
    const lowest = qoe.chunks.filter((c) => c.phase === 'playing').sort((a, b) => a.bufferBeforeS - b.bufferBeforeS)[0]!;
    expect(lowest.bufferBeforeS).toBeLessThan(1);
    expect(lowest.rtpKbps!).toBeGreaterThan(9 * topKbps);
    // The network was slower than the pace: the measured throughput fell and HYB stepped down.
    expect(Math.min(...qoe.chunks.slice(1).map((c) => c.rung))).toBeLessThan(media.videoRungs - 1);
    printTimeline(`rebuffer session (${qoe.rebufferCount} rebuffer(s), ${qoe.rebufferS.toFixed(2)} s)`, qoe);
  });
});
