/**
 * `attachSammy` against a stand-in for a dash.js 5 player: what it installs and when,
 * each arm's rtp (and tb) on segment requests, the chunk records, the failure path
 * without segment sizes, and `detach()` giving the player back. The real player is
 * exercised by the Playwright tests in e2e/.
 */
import { jest } from '@jest/globals';
import type { SegmentsSidecar } from '@sammy/encoder/sidecar';
import { memoryStore } from '../../src/abr/history.js';
import type { Arm, ChunkRecord } from '../../src/abr/index.js';
import { LAB_BITRATES_KBPS } from '../abr/fixtures.js';

type Interceptor = (x: unknown) => Promise<unknown>;

class FakeVideo extends EventTarget {
  currentTime = 0;
  played = { length: 0, start: () => 0, end: () => 0 };
  private frames: (() => void)[] = [];
  requestVideoFrameCallback(cb: () => void) {
    this.frames.push(cb);
    return this.frames.length;
  }
  presentFrame() {
    const cbs = this.frames;
    this.frames = [];
    for (const cb of cbs) cb();
  }
}

class FakePlayer {
  settings: Record<string, unknown> = {
    streaming: {
      abandonLoadTimeout: 10000, // dash.js's default
      buffer: { bufferTimeDefault: 12, bufferTimeAtTopQuality: 30, bufferTimeAtTopQualityLongForm: 60, fastSwitchEnabled: true },
      cmcd: { enabled: false, mode: 'query', version: 1, enabledKeys: ['br'], rtpSafetyFactor: 5 },
      abr: { rules: Object.fromEntries(BUILT_IN_RULES.map((r) => [r, { active: true }])), initialBitrate: { video: -1 } },
    },
  };
  updates: Record<string, unknown>[] = [];
  rules: string[] = [];
  requestInterceptors: Interceptor[] = [];
  responseInterceptors: Interceptor[] = [];
  bufferS = 12;
  video = new FakeVideo();
  getSettings() {
    return this.settings;
  }
  updateSettings(s: Record<string, unknown>) {
    this.updates.push(s);
    this.settings = merge(this.settings, s);
  }
  extended: string[] = [];
  extend(name: string) {
    this.extended.push(name);
  }
  ruleTypes = new Map<string, string>();
  addABRCustomRule(type: string, name: string) {
    this.rules.push(name);
    this.ruleTypes.set(name, type);
  }
  removeABRCustomRule(name: string) {
    this.rules = this.rules.filter((r) => r !== name);
  }
  addRequestInterceptor(f: Interceptor) {
    this.requestInterceptors.push(f);
  }
  removeRequestInterceptor(f: Interceptor) {
    this.requestInterceptors = this.requestInterceptors.filter((x) => x !== f);
  }
  addResponseInterceptor(f: Interceptor) {
    this.responseInterceptors.push(f);
  }
  removeResponseInterceptor(f: Interceptor) {
    this.responseInterceptors = this.responseInterceptors.filter((x) => x !== f);
  }
  getBufferLength() {
    return this.bufferS;
  }
  getRepresentationsByType() {
    return [];
  }
  getVideoElement() {
    return this.video;
  }
  /** What dash.js does with a request: every interceptor in turn. */
  async send<T>(request: T): Promise<T> {
    let r: unknown = request;
    for (const f of this.requestInterceptors) r = await f(r);
    return r as T;
  }
  async receive(response: unknown): Promise<void> {
    for (const f of this.responseInterceptors) await f(response);
  }
}

function merge(a: Record<string, unknown>, b: Record<string, unknown>): Record<string, unknown> {
  const out = { ...a };
  for (const [k, v] of Object.entries(b)) {
    const prev = out[k];
    out[k] = typeof prev === 'object' && prev !== null && !Array.isArray(prev) && typeof v === 'object' && v !== null && !Array.isArray(v) ? merge(prev as Record<string, unknown>, v as Record<string, unknown>) : v;
  }
  return out;
}

const factoryMaker = { getClassFactory: (ctor: unknown) => ctor, getClassFactoryByName: () => () => ({ create: () => ({}) }) };
jest.unstable_mockModule('dashjs', () => ({ default: { FactoryMaker: factoryMaker } }));
const { attachSammy, SammyConfigError } = await import('../../src/dashjs/index.js');
const { BUILT_IN_RULES } = await import('../../src/dashjs/settings.js');

const sidecar: SegmentsSidecar = {
  segmentDurationS: 2,
  representations: LAB_BITRATES_KBPS.map((kbps, i) => ({
    id: String(i),
    bitrateKbps: kbps,
    width: 640,
    height: 360,
    segmentSizesBytes: Array.from({ length: 30 }, () => (kbps * 1000 * 2) / 8),
    ssim: Array.from({ length: 30 }, () => 0.9),
    meanSsim: 0.9,
    initSizeBytes: 800,
  })),
};
const TOP_KBPS = LAB_BITRATES_KBPS.at(-1)!;

(globalThis as { location?: unknown }).location = { href: 'http://127.0.0.1:8080/' };

function attach(arm: Arm, segments: () => unknown = () => sidecar, player = new FakePlayer()) {
  const chunks: ChunkRecord[] = [];
  const logs: string[] = [];
  const handle = attachSammy(player as never, { arm, segments, history: memoryStore(), log: (m) => logs.push(m), onChunk: (r) => chunks.push(r) });
  return { handle, player, chunks, logs };
}

const manifest = { url: '/media/manifest.mpd', headers: {}, customData: { request: { type: 'MPD' } } };

async function fetchChunk(player: FakePlayer, rung: number, segment: number, headers: Record<string, string>) {
  const sent = await player.send({
    url: `/media/chunk-${rung}-${String(segment).padStart(5, '0')}.m4s`,
    headers,
    customData: { request: { type: 'MediaSegment', mediaType: 'video', index: segment - 1 } },
  });
  await player.receive({ request: sent, status: 200, headers: { 'server-timing': 'pace;dur=4200;desc="paced"' }, data: new ArrayBuffer(1000), resourceTiming: { duration: 100 } });
  return sent.headers;
}

const DASHJS_HEADERS = { 'CMCD-Object': 'br=300,d=2000,ot=v,tb=1050', 'CMCD-Status': 'bs,rtp=15100' };

describe('attachSammy', () => {
  test('fixed4x: 4x the top bitrate in CMCD-Status with that top as tb, and the chunk records what was sent and applied', async () => {
    const { player, chunks } = attach('fixed4x');
    await player.send(manifest);
    const headers = await fetchChunk(player, 4, 3, DASHJS_HEADERS);
    expect(headers).toEqual({ 'CMCD-Object': `br=300,d=2000,ot=v,tb=${TOP_KBPS}`, 'CMCD-Status': 'bs,rtp=4200' });
    expect(chunks).toHaveLength(1);
    expect(chunks[0]).toMatchObject({ index: 2, rung: 4, bitrateKbps: 1050, sizeBytes: 1000, rtpKbps: 4200, appliedRateKbps: 4200, paceFloorKbps: null, bufferBeforeS: 12, bufferAfterS: 14 });
    expect(player.rules).toEqual([]);
  });

  test("control strips rtp and leaves tb as dash.js wrote it; dashjs-rtp keeps dash.js's own", async () => {
    const control = attach('control').player;
    await control.send(manifest);
    expect(await fetchChunk(control, 2, 1, DASHJS_HEADERS)).toEqual({ 'CMCD-Object': DASHJS_HEADERS['CMCD-Object'], 'CMCD-Status': 'bs' });
    const stock = attach('dashjs-rtp').player;
    await stock.send(manifest);
    expect(await fetchChunk(stock, 2, 1, DASHJS_HEADERS)).toEqual(DASHJS_HEADERS);
    // dash.js's own abandonment aborts what it gives up in every arm (xhr-abort.ts).
    expect(control.extended).toEqual(['XHRLoader', 'FragmentModel']);
  });

  test('sammy: CMCD in headers from the attach on; the manifest waits for the sizes, then the core sets the first rung and turns the built-in rules off', async () => {
    let release!: (s: SegmentsSidecar) => void;
    const { player, handle } = attach('sammy', () => new Promise<SegmentsSidecar>((resolve) => (release = resolve)));
    // The bitrate rule and the stalled-download rule.
    expect(player.rules.map((name) => player.ruleTypes.get(name))).toEqual(['qualitySwitchRules', 'abandonFragmentRules']);
    expect(player.extended).toEqual(['XHRLoader', 'FragmentModel']);
    expect(player.settings).toMatchObject({ streaming: { cmcd: { enabled: true, mode: 'headers' }, buffer: { bufferTimeDefault: 30 } } });
    let manifestSent = false;
    const pending = player.send(manifest).then(() => (manifestSent = true));
    await new Promise((r) => setTimeout(r, 20));
    expect(manifestSent).toBe(false);
    release(sidecar);
    await pending;
    await handle.ready;
    // No history: the no-history rule's rung 0.
    expect(player.settings).toMatchObject({ streaming: { abandonLoadTimeout: 0, abr: { rules: { throughputRule: { active: false } }, initialBitrate: { video: LAB_BITRATES_KBPS[0] } } } });
    expect(handle.qoe().config).toMatchObject({ player: 'dashjs', arm: 'sammy', manifest: 'http://127.0.0.1:8080/media/manifest.mpd', maxBufferS: 30 });
  });

  test('sammy: no rtp before the first frame; after it the core pace, with the top it was computed from as tb', async () => {
    const { player, chunks, handle } = attach('sammy');
    await player.send(manifest);
    expect(await fetchChunk(player, 0, 1, DASHJS_HEADERS)).toEqual({ 'CMCD-Object': DASHJS_HEADERS['CMCD-Object'], 'CMCD-Status': 'bs' });
    expect(chunks[0]).toMatchObject({ phase: 'initial', rtpKbps: null, reason: expect.any(String) });
    player.video.presentFrame();
    expect(handle.phase()).toBe('playing');
    const headers = await fetchChunk(player, 4, 2, { 'CMCD-Object': 'br=1050,ot=v,tb=9999', 'CMCD-Status': 'bs' });
    const rtp = Number(/rtp=(\d+)/.exec(headers['CMCD-Status']!)![1]);
    expect(headers['CMCD-Object']).toBe(`br=1050,ot=v,tb=${TOP_KBPS}`);
    // A 12 s buffer of a 30 s target: between 2.9x and 11x the top bitrate.
    expect(rtp).toBeGreaterThanOrEqual(2.9 * TOP_KBPS);
    expect(rtp).toBeLessThanOrEqual(11 * TOP_KBPS + 100);
    expect(handle.requests().map((r) => [r.phase, r.rtpKbps])).toEqual([['initial', null], ['playing', rtp]]);
  });

  test('sammy: tb is never below the br the player wrote (a playlist BANDWIDTH above the nominal top, as hls.js writes on video and audio)', async () => {
    const { player, handle } = attach('sammy');
    await player.send(manifest);
    player.video.presentFrame();
    expect(handle.phase()).toBe('playing');
    const peakBr = Math.round(TOP_KBPS * 1.45);
    expect((await fetchChunk(player, 4, 2, { 'CMCD-Object': `br=${peakBr},ot=v`, 'CMCD-Status': 'bs' }))['CMCD-Object']).toBe(`br=${peakBr},ot=v,tb=${peakBr}`);
    // A lower rung's br under the top: tb stays the top the rtp was computed from.
    expect((await fetchChunk(player, 1, 3, { 'CMCD-Object': 'br=300,ot=v', 'CMCD-Status': 'bs' }))['CMCD-Object']).toBe(`br=300,ot=v,tb=${TOP_KBPS}`);
  });

  describe('answers that did not cross the network', () => {
    /** Resource Timing entries by URL, as the browser would list them. */
    const entries = new Map<string, Partial<PerformanceResourceTiming>>();
    let spy: jest.SpiedFunction<typeof performance.getEntriesByName>;
    beforeEach(() => {
      entries.clear();
      spy = jest.spyOn(performance, 'getEntriesByName').mockImplementation((name) => {
        const e = entries.get(name);
        return e ? [{ startTime: 1, requestStart: 1, responseStart: 5, responseEnd: 21, ...e } as PerformanceEntry] : [];
      });
    });
    afterEach(() => spy.mockRestore());
    const at = (rung: number, segment: number) => `http://127.0.0.1:8080/media/chunk-${rung}-${String(segment).padStart(5, '0')}.m4s`;

    test.each([
      ['the cache answered (transferSize 0)', { transferSize: 0, encodedBodySize: 1000 }, 'browser-cache'],
      ['the cache answered after a 304 (only headers crossed)', { transferSize: 310, encodedBodySize: 1000 }, 'browser-cache'],
      ['the network answered', { transferSize: 1310, encodedBodySize: 1000 }, undefined],
      ['a cross-origin entry without sizes', { transferSize: 0, encodedBodySize: 0 }, undefined],
      ['a timing no link produces (1000 bytes in 0.1 ns)', { transferSize: 1310, encodedBodySize: 1000, responseEnd: 1.0000001 }, 'implausible-timing'],
    ] as const)('%s', async (_, entry, reason) => {
      const { player, chunks, handle } = attach('sammy');
      await player.send(manifest);
      entries.set(at(0, 1), entry);
      await fetchChunk(player, 0, 1, DASHJS_HEADERS);
      player.video.presentFrame();
      expect(chunks[0]!.notFromNetwork).toBe(reason);
      if (reason) {
        // Recorded as played, but no rate was applied to it, and neither the estimate nor the history has it.
        expect(chunks[0]!.appliedRateKbps).toBeNull();
        expect(handle.history()).toEqual([]);
        expect(handle.qoe().initialThroughputKbps).toBeNull();
      } else {
        expect(chunks[0]!.appliedRateKbps).toBe(4200);
        expect(handle.history()).toHaveLength(1);
      }
    });

    test("a playing-phase chunk from the cache is left out of the session's chunk throughput", async () => {
      const { player, chunks, handle } = attach('sammy');
      await player.send(manifest);
      await fetchChunk(player, 0, 1, DASHJS_HEADERS);
      player.video.presentFrame();
      entries.set(at(4, 2), { transferSize: 0, encodedBodySize: 1000, responseEnd: 6 });
      entries.set(at(4, 3), { transferSize: 1310, encodedBodySize: 1000, responseEnd: 81 });
      await fetchChunk(player, 4, 2, DASHJS_HEADERS);
      await fetchChunk(player, 4, 3, DASHJS_HEADERS);
      expect(chunks.map((c) => c.notFromNetwork)).toEqual([undefined, 'browser-cache', undefined]);
      // 1000 bytes in 80 ms: 100 kbit/s, the network chunk's alone (the cached one measured 1600).
      expect(handle.qoe().chunkThroughputKbps).toBeCloseTo(100, 5);
    });
  });

  test('sammy without segment sizes: ready rejects, the rule goes, requests pass untouched and are still recorded', async () => {
    const { player, handle, chunks, logs } = attach('sammy', () => ({ not: 'a sidecar' }));
    await player.send(manifest);
    await expect(handle.ready).rejects.toThrow(/cannot load the segment sizes from the segments function/);
    expect(player.rules).toEqual([]);
    expect(logs.join('\n')).toMatch(/Sammy is off/);
    expect(await fetchChunk(player, 2, 1, DASHJS_HEADERS)).toEqual(DASHJS_HEADERS);
    expect(chunks).toHaveLength(1);
  });

  test("the other arms play without segments.json (no SSIM) and their ready resolves", async () => {
    const { player, handle } = attach('control', () => {
      throw new Error('missing');
    });
    await player.send(manifest);
    await expect(handle.ready).resolves.toBeUndefined();
  });

  test("detach(): interceptors, rule and settings go, the player's own settings come back, the records stay", async () => {
    const fresh = new FakePlayer();
    const before = structuredClone(fresh.settings);
    const { player, handle, chunks } = attach('sammy', () => sidecar, fresh);
    await player.send(manifest);
    await fetchChunk(player, 0, 1, DASHJS_HEADERS);
    handle.detach();
    expect(player.requestInterceptors).toEqual([]);
    expect(player.responseInterceptors).toEqual([]);
    expect(player.rules).toEqual([]);
    expect(player.settings).toEqual(before);
    expect(handle.qoe().chunks).toHaveLength(1);
    expect(chunks).toHaveLength(1);
    handle.detach(); // twice is harmless
  });

  test('a player that cannot start Sammy (no video element) goes on untouched: detached, logged once', async () => {
    const { player, logs } = attach('sammy');
    player.getVideoElement = () => {
      throw new Error('You must first call attachView()');
    };
    expect(await player.send(manifest)).toEqual(manifest);
    expect(player.settings).toMatchObject({ streaming: { cmcd: { mode: 'query' }, abr: { rules: { throughputRule: { active: true } } } } });
    expect(player.requestInterceptors).toEqual([]);
    expect(player.rules).toEqual([]);
    expect(logs.filter((l) => /could not start/.test(l))).toHaveLength(1);
  });

  test('detach() before the sizes are asked for settles ready', async () => {
    const fresh = new FakePlayer();
    const handle = attachSammy(fresh as never, { history: null });
    handle.detach();
    await expect(handle.ready).rejects.toThrow(/detached before the segment sizes were loaded/);
    expect(handle.qoe()).toMatchObject({ arm: 'sammy', chunks: [], playDelayS: null });
  });

  test('bad options are refused before the player is touched, naming the option', () => {
    const player = new FakePlayer();
    const bad: [object, RegExp][] = [
      [{ config: { paceFullMultiplier: -1 } }, /invalid paceFullMultiplier: -1/],
      [{ config: { maxBuffer: 30 } }, /unknown player parameter "maxBuffer"/],
      [{ segments: 42 }, /invalid segments: 42/],
      [{ history: 7 }, /invalid history: 7/],
      [{ arm: 'bola' }, /unknown arm "bola"/],
      [{ onChunk: 'x' }, /invalid onChunk/],
      [{ segmnets: '/s.json' }, /unknown option "segmnets"/],
    ];
    for (const [options, message] of bad) {
      expect(() => attachSammy(player as never, options as never)).toThrow(SammyConfigError);
      expect(() => attachSammy(player as never, options as never)).toThrow(message);
    }
    expect(player.updates).toEqual([]);
    expect(player.requestInterceptors).toEqual([]);
  });
});
