import { levelFor, levelRungs } from '../../src/hlsjs/abr-controller.js';
import { bufferedAheadS, chunkOf } from '../../src/browser/playback.js';
import type { PlaybackCore } from '../../src/browser/playback.js';
import { allowedVariants, rungOf, SammyAbrManager } from '../../src/shaka/abr-manager.js';

describe('what the adapters read from their players', () => {
  test("chunk URLs name the rung and the 0-based index; the buffer is the range holding the playhead", () => {
    expect(chunkOf('http://h/media/chunk-4-00012.m4s')).toEqual({ rung: 4, index: 11 });
    expect(chunkOf('/media/chunk-0-00001.m4s?CMCD=x')).toEqual({ rung: 0, index: 0 });
    expect(chunkOf('/media/init-4.m4s')).toBeNull();
    const ranges = [{ start: 0, end: 4 }, { start: 6, end: 10 }];
    expect(bufferedAheadS(ranges, 1)).toBe(3);
    expect(bufferedAheadS(ranges, 5)).toBe(0);
    expect(bufferedAheadS(ranges, 5.95)).toBeCloseTo(4.05); // a seek lands just before the range
  });

  test('Shaka: variants map to rungs by Representation id, restrictions apply, lowest first', () => {
    const v = (id: string, height: number, bandwidth: number) => ({ video: { originalId: id, height, width: (height * 16) / 9 }, bandwidth }) as never;
    const variants = [v('2', 360, 564_000), v('0', 216, 214_000), v('4', 540, 1_114_000), v('x', 100, 1)];
    expect(allowedVariants(variants, undefined).map(rungOf)).toEqual([0, 2, 4]);
    expect(allowedVariants(variants, { maxHeight: 400 }).map(rungOf)).toEqual([0, 2]);
    expect(allowedVariants(variants, { minBandwidth: 500_000, maxBandwidth: Infinity }).map(rungOf)).toEqual([2, 4]);
  });

  test('hls.js: levels map to rungs by playlist name, and a rung to the highest allowed level at or below it', () => {
    const rungs = levelRungs([{ url: ['http://h/media/media-0.m3u8'] }, { url: ['media-2.m3u8'] }, { url: ['media-4.m3u8?x=1'] }]);
    expect(rungs).toEqual([0, 2, 4]);
    expect(levelFor(rungs, 4, 0, 2)).toBe(2);
    expect(levelFor(rungs, 3, 0, 2)).toBe(1);
    expect(levelFor(rungs, 4, 0, 1)).toBe(1); // capped by hls.js (autoLevelCapping)
    expect(levelFor(rungs, 0, 1, 2)).toBe(1); // below the lowest allowed: the lowest allowed
    expect(levelRungs([{ url: ['other.m3u8'] }, { url: [] }])).toEqual([0, 1]);
  });

  test("Shaka: the Sammy AbrManager switches once Shaka has appended the chunk it decided on, not while Shaka still handles its response", async () => {
    const v = (id: string) => ({ video: { originalId: id, height: 360, width: 640 }, bandwidth: 1000 * (Number(id) + 1) }) as never;
    let rung = 0;
    const core = { firstDecision: () => ({ rung: 0 }), decide: () => ({ rung }), bufferS: () => 2, segmentDurationS: 2, session: null } as unknown as PlaybackCore;
    const abr = new SammyAbrManager(core, () => {});
    const switches: number[] = [];
    abr.init((variant) => void switches.push(rungOf(variant as never)!));
    abr.setVariants([v('0'), v('4')]);
    abr.enable();
    expect(rungOf(abr.chooseVariant())).toBe(0);
    rung = 4;
    abr.afterChunk();
    await new Promise((r) => setTimeout(r, 10));
    // A switch here made Shaka fetch the segment it was handling again.
    expect(switches).toEqual([]);
    abr.onVideoAppended();
    abr.onVideoAppended();
    expect(switches).toEqual([4]);
    // No switch pending after stop().
    rung = 0;
    abr.afterChunk();
    abr.stop();
    abr.onVideoAppended();
    expect(switches).toEqual([4]);
  });

  test('Shaka: setVariants says whether the set changed (a true right after a restriction change made Shaka clear the buffer)', () => {
    const core = {} as PlaybackCore;
    const abr = new SammyAbrManager(core, () => {});
    const a = { video: { originalId: '0' } } as never;
    const b = { video: { originalId: '4' } } as never;
    expect(abr.setVariants([a, b])).toBe(true);
    expect(abr.setVariants([b, a])).toBe(false);
    expect(abr.setVariants([a])).toBe(true);
    expect(abr.setVariants([a])).toBe(false);
  });
});
