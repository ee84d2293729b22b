/** The HLS playlists' numbers (RFC 8216) on made-up segments, and the text read back by a real HLS parser. */
import { EncoderError } from '../src/errors.js';
import {
  averageSegmentBitrateBps,
  mediaPlaylist,
  multivariantPlaylist,
  peakSegmentBitrateBps,
  targetDurationS,
  type HlsRendition,
  type HlsSegment,
} from '../src/hls.js';
import { parseM3u8 } from './parse-hls.js';

/** Segments named 1, 2, ... with these durations and sizes. */
function segments(list: Array<[durationS: number, sizeBytes: number]>): HlsSegment[] {
  return list.map(([durationS, sizeBytes], i) => ({ uri: `chunk-${i + 1}.m4s`, durationS, sizeBytes }));
}

function rendition(id: string, contentType: 'video' | 'audio', segs: HlsSegment[], extra: Partial<HlsRendition> = {}): HlsRendition {
  return { id, contentType, initUri: `init-${id}.m4s`, segments: segs, codecs: contentType === 'video' ? 'avc1.64001f' : 'mp4a.40.2', width: 0, height: 0, frameRate: null, channels: null, ...extra };
}

describe('peak segment bit rate (RFC 8216 4.1)', () => {
  test('a 10.7 ms tail of a few hundred bytes never sets the peak; it counts with its neighbour', () => {
    // The audio the encoder once wrote: ~2 s segments of ~16.5 kB, then 367 bytes in 10.7 ms (274 kbit/s alone).
    const segs = segments([[1.941333, 16100], [2.005333, 16700], [2.069333, 17384], [0.010667, 367]]);
    const peakBps = peakSegmentBitrateBps(segs);
    expect(peakBps).toBeCloseTo(((17384 + 367) * 8) / (2.069333 + 0.010667), 6);
    expect(peakBps).toBeLessThan(70_000);
  });

  test('the peak is over runs of half to one and a half target durations, not single segments', () => {
    // 0.4 s segments: target 1 s, so runs of 2 or 3 segments (0.8 s, 1.2 s) count and single ones do not.
    const segs = segments([[0.4, 1000], [0.4, 1000], [0.4, 10_000], [0.4, 1000], [0.4, 1000]]);
    expect(targetDurationS(segs)).toBe(1);
    expect(peakSegmentBitrateBps(segs)).toBeCloseTo((11_000 * 8) / 0.8, 6);
  });

  test('with 2 s segments and target 2, each segment is a run (2 s) and pairs (4 s) are too long', () => {
    const segs = segments([[2, 50_000], [2, 80_000], [2, 60_000]]);
    expect(peakSegmentBitrateBps(segs)).toBe((80_000 * 8) / 2);
  });

  test('a run of exactly half a target duration counts, though its float sum falls a hair short', () => {
    const segs = segments([[0.3, 1000], [0.6, 1000], [0.1, 2000], [2, 1000]]);
    expect(targetDurationS(segs)).toBe(2);
    expect(0.3 + 0.6 + 0.1).toBeLessThan(1);
    expect(peakSegmentBitrateBps(segs)).toBeCloseTo(4000 * 8, 6);
  });

  test('a playlist shorter than half a target duration has its average as its peak', () => {
    const segs = segments([[0.3, 900]]);
    expect(peakSegmentBitrateBps(segs)).toBeCloseTo((900 * 8) / 0.3, 6);
  });

  test('the average is all the bits over the whole duration', () => {
    expect(averageSegmentBitrateBps(segments([[2, 10_000], [2, 30_000], [0.5, 500]]))).toBeCloseTo((40_500 * 8) / 4.5, 6);
  });

  test.each([
    ['no segments', [], /no media segments for media playlist/],
    ['a zero duration', [[2, 1000], [0, 300]], /segment chunk-2\.m4s has no duration \(0 s\)/],
    ['a NaN duration', [[Number.NaN, 1000]], /segment chunk-1\.m4s has no duration \(NaN s\)/],
    ['an empty segment', [[2, 0]], /segment chunk-1\.m4s has no bytes \(0\)/],
  ] as Array<[string, Array<[number, number]>, RegExp]>)('refuses %s with a clear error', (_, list, message) => {
    for (const f of [peakSegmentBitrateBps, averageSegmentBitrateBps]) {
      expect(() => f(segments(list))).toThrow(EncoderError);
      expect(() => f(segments(list))).toThrow(message);
    }
  });
});

describe('the playlists, read back by m3u8-parser', () => {
  const video = [
    rendition('0', 'video', segments([[2, 40_000], [2, 60_000], [2, 50_000]]), { width: 384, height: 216, frameRate: 25, codecs: 'avc1.64000d' }),
    rendition('1', 'video', segments([[2, 90_000], [2, 120_000], [2, 100_000]]), { width: 640, height: 360, frameRate: 25 }),
  ];
  const audio = rendition('2', 'audio', segments([[1.941333, 16_100], [2.005333, 16_700], [2.080000, 17_751]]), { channels: 2 });

  test('a media playlist: version, target duration, map, every segment with its duration, end list; no warnings', () => {
    const { manifest, warnings } = parseM3u8(mediaPlaylist(audio));
    expect(warnings).toEqual([]);
    expect(manifest).toMatchObject({ version: 6, targetDuration: 2, mediaSequence: 1, playlistType: 'VOD', endList: true, independentSegments: true });
    expect(manifest.segments.map((s) => [s.uri, s.duration, s.map?.uri])).toEqual(audio.segments.map((s) => [s.uri, s.durationS, 'init-2.m4s']));
  });

  test('the multivariant playlist: BANDWIDTH and AVERAGE-BANDWIDTH are video plus audio, CHANNELS on the audio', () => {
    const { manifest, warnings, mediaTags } = parseM3u8(multivariantPlaylist(video, audio));
    expect(warnings).toEqual([]);
    expect(mediaTags).toEqual([{ TYPE: 'AUDIO', 'GROUP-ID': 'audio', NAME: 'audio', DEFAULT: 'YES', AUTOSELECT: 'YES', CHANNELS: '2', URI: 'media-2.m3u8' }]);
    expect(manifest.mediaGroups!.AUDIO.audio!.audio).toMatchObject({ default: true, uri: 'media-2.m3u8' });
    const audioPeakBps = Math.ceil(peakSegmentBitrateBps(audio.segments));
    const audioAverageBps = Math.ceil(averageSegmentBitrateBps(audio.segments));
    expect(manifest.playlists!.map((p) => [p.uri, p.attributes.BANDWIDTH, Number(p.attributes['AVERAGE-BANDWIDTH'])])).toEqual([
      ['media-0.m3u8', 240_000 + audioPeakBps, Math.ceil((150_000 * 8) / 6) + audioAverageBps],
      ['media-1.m3u8', 480_000 + audioPeakBps, Math.ceil((310_000 * 8) / 6) + audioAverageBps],
    ]);
    expect(manifest.playlists![0]!.attributes).toMatchObject({ RESOLUTION: { width: 384, height: 216 }, CODECS: 'avc1.64000d,mp4a.40.2', 'FRAME-RATE': 25, AUDIO: 'audio' });
  });

  test('without audio, no EXT-X-MEDIA and the video alone', () => {
    const { manifest, mediaTags } = parseM3u8(multivariantPlaylist(video, null));
    expect(mediaTags).toEqual([]);
    expect(manifest.playlists!.map((p) => [p.attributes.BANDWIDTH, p.attributes.CODECS, p.attributes.AUDIO])).toEqual([
      [240_000, 'avc1.64000d', undefined],
      [480_000, 'avc1.64001f', undefined],
    ]);
  });

  test('an audio rendition with no channel count is refused, not written without CHANNELS', () => {
    expect(() => multivariantPlaylist(video, { ...audio, channels: null })).toThrow(/audio representation 2: its init segment is not a sound track/);
  });
});
