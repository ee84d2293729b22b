import { levelFor, levelRungs } from '../../src/hlsjs/abr-controller.js';
import { bufferedAheadS, chunkOf } from '../../src/browser/playback.js';
import { allowedVariants, rungOf } from '../../src/shaka/abr-manager.js';

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
});
