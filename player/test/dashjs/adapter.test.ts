/**
 * The adapter's wiring, against a stand-in for dash.js: each arm's rtp policy (from the
 * arm registry) is applied to segment requests, and each downloaded video chunk becomes
 * a record carrying what was sent. The real player is exercised by the loopback test.
 */
import { jest } from '@jest/globals';
import type { SegmentsSidecar } from '@sammy/encoder/sidecar';
import { InitialThroughputHistory, memoryStore } from '../../src/abr/history.js';
import type { Arm, ChunkRecord } from '../../src/abr/index.js';
import { LAB_BITRATES_KBPS } from '../abr/fixtures.js';

type Interceptor = (x: unknown) => Promise<unknown>;

class FakePlayer {
  settings: unknown[] = [];
  rules: string[] = [];
  requestInterceptor: Interceptor | null = null;
  responseInterceptor: Interceptor | null = null;
  bufferS = 12;
  updateSettings(s: unknown) {
    this.settings.push(s);
  }
  addABRCustomRule(_type: string, name: string) {
    this.rules.push(name);
  }
  addRequestInterceptor(f: Interceptor) {
    this.requestInterceptor = f;
  }
  addResponseInterceptor(f: Interceptor) {
    this.responseInterceptor = f;
  }
  getBufferLength() {
    return this.bufferS;
  }
  getRepresentationsByType() {
    return [];
  }
  initialize() {}
  destroy() {}
}

let fake = new FakePlayer();
const factoryMaker = { getClassFactory: (ctor: unknown) => ctor, getClassFactoryByName: () => () => ({ create: () => ({}) }) };
jest.unstable_mockModule('dashjs', () => ({ MediaPlayer: () => ({ create: () => fake }), default: { FactoryMaker: factoryMaker } }));
const { startPlayback } = await import('../../src/dashjs/adapter.js');
const { DEFAULT_PLAYER_CONFIG } = await import('../../src/browser/player-config.js');

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

class FakeVideo extends EventTarget {
  currentTime = 0;
  played = { length: 0, start: () => 0, end: () => 0 };
  requestVideoFrameCallback() {
    return 1;
  }
}

(globalThis as { location?: unknown }).location = { href: 'http://127.0.0.1:8080/' };

function play(arm: Arm) {
  fake = new FakePlayer();
  const chunks: ChunkRecord[] = [];
  const playback = startPlayback({
    video: new FakeVideo() as unknown as HTMLVideoElement,
    manifestUrl: '/media/manifest.mpd',
    arm,
    config: DEFAULT_PLAYER_CONFIG,
    sidecar,
    history: new InitialThroughputHistory(memoryStore(), 10),
    now: () => 0,
    log: () => {},
    onChunk: (r) => chunks.push(r),
  });
  return { playback, chunks, player: fake };
}

async function fetchChunk(player: FakePlayer, rung: number, segment: number, status: string) {
  const request = {
    url: `/media/chunk-${rung}-${String(segment).padStart(5, '0')}.m4s`,
    headers: { 'CMCD-Status': status },
    customData: { request: { type: 'MediaSegment', mediaType: 'video', index: segment - 1 } },
  };
  const sent = (await player.requestInterceptor!(request)) as typeof request;
  await player.responseInterceptor!({ request: sent, status: 200, headers: {}, data: new ArrayBuffer(1000), resourceTiming: { duration: 100 } });
  return sent.headers['CMCD-Status'];
}

describe('startPlayback', () => {
  test("fixed4x writes 4x the top bitrate into CMCD-Status, and the chunk records what was sent", async () => {
    const { player, chunks } = play('fixed4x');
    expect(await fetchChunk(player, 4, 3, 'bs,rtp=15100')).toBe('bs,rtp=4200');
    expect(chunks).toHaveLength(1);
    expect(chunks[0]).toMatchObject({ index: 2, rung: 4, bitrateKbps: 1050, sizeBytes: 1000, rtpKbps: 4200, paceFloorKbps: null, bufferBeforeS: 12, bufferAfterS: 14 });
    expect(player.rules).toEqual([]);
  });

  test("control strips rtp; dashjs-rtp keeps dash.js's own", async () => {
    expect(await fetchChunk(play('control').player, 2, 1, 'bs,rtp=15100')).toBe('bs');
    expect(await fetchChunk(play('dashjs-rtp').player, 2, 1, 'bs,rtp=15100')).toBe('bs,rtp=15100');
  });

  test('sammy installs its rule and sends no rtp before the first frame', async () => {
    const { player, chunks, playback } = play('sammy');
    expect(player.rules).toEqual(['SammyRule']);
    expect(playback.session).not.toBeNull();
    expect(await fetchChunk(player, 0, 1, 'bs,rtp=15100')).toBe('bs');
    expect(chunks[0]).toMatchObject({ phase: 'initial', rtpKbps: null, reason: expect.any(String) });
  });

  test('sammy without segments.json is refused', () => {
    expect(() =>
      startPlayback({ video: new FakeVideo() as unknown as HTMLVideoElement, manifestUrl: '/m.mpd', arm: 'sammy', config: DEFAULT_PLAYER_CONFIG, sidecar: null, history: new InitialThroughputHistory(memoryStore(), 10) }),
    ).toThrow(/sammy arm needs segments.json/);
  });
});
