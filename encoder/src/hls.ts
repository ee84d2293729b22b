/**
 * CMAF HLS playlists (RFC 8216) over the DASH ladder's own fMP4 files, so one encode
 * serves DASH players and HLS players: `manifest.m3u8` (the multivariant playlist: one
 * variant per video rung, the audio as a rendition group) and `media-<id>.m3u8` per
 * representation (EXT-X-MAP to its init segment, one EXTINF per media segment).
 *
 * Every number comes from the files on disk: EXTINF is the segment's real duration
 * (its `trun` samples, fmp4.ts); BANDWIDTH is the peak segment bit rate of the video
 * rung plus that of the audio (RFC 8216 4.3.4.2: the largest sum of peak segment bit
 * rates of a playable combination), AVERAGE-BANDWIDTH the same over the whole stream.
 * Capped VBR makes the peak ~1.5x the nominal bitrate, so BANDWIDTH is well above the
 * MPD's @bandwidth; players that rank rungs by it still rank them in the same order.
 */
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { EncoderError } from './errors.js';
import { segmentDurationS, trackTiming } from './fmp4.js';
import { readMpdRepresentations, segmentFiles, type MpdRepresentation } from './mpd.js';

export const MULTIVARIANT_PLAYLIST = 'manifest.m3u8';

export function mediaPlaylistName(id: string): string {
  return `media-${id}.m3u8`;
}

/** RFC 8216 version 6: EXT-X-MAP in a playlist that is not I-frame only. */
const HLS_VERSION = 6;

export interface HlsSegment {
  uri: string;
  durationS: number;
  sizeBytes: number;
}

export interface HlsRendition {
  id: string;
  contentType: 'video' | 'audio';
  initUri: string;
  segments: HlsSegment[];
  codecs: string;
  width: number;
  height: number;
  frameRate: number | null;
}

/** Peak and average bit rate of a rendition's media segments (bits per second). */
export function renditionBitrates(r: Pick<HlsRendition, 'segments'>): { peakBps: number; averageBps: number } {
  let peakBps = 0;
  let bits = 0;
  let seconds = 0;
  for (const s of r.segments) {
    if (s.durationS > 0) peakBps = Math.max(peakBps, (s.sizeBytes * 8) / s.durationS);
    bits += s.sizeBytes * 8;
    seconds += s.durationS;
  }
  return { peakBps: Math.ceil(peakBps), averageBps: seconds > 0 ? Math.ceil(bits / seconds) : 0 };
}

/** A VOD media playlist. TARGETDURATION is the longest EXTINF rounded to the nearest integer (RFC 8216 4.3.3.1). */
export function mediaPlaylist(r: Pick<HlsRendition, 'initUri' | 'segments'>): string {
  if (r.segments.length === 0) throw new EncoderError('ENC_FFMPEG_FAILED', `no media segments for ${r.initUri}`);
  const target = Math.max(1, ...r.segments.map((s) => Math.round(s.durationS)));
  const lines = [
    '#EXTM3U',
    `#EXT-X-VERSION:${HLS_VERSION}`,
    `#EXT-X-TARGETDURATION:${target}`,
    '#EXT-X-MEDIA-SEQUENCE:1',
    '#EXT-X-PLAYLIST-TYPE:VOD',
    '#EXT-X-INDEPENDENT-SEGMENTS',
    `#EXT-X-MAP:URI="${r.initUri}"`,
    ...r.segments.flatMap((s) => [`#EXTINF:${s.durationS.toFixed(6)},`, s.uri]),
    '#EXT-X-ENDLIST',
  ];
  return `${lines.join('\n')}\n`;
}

const AUDIO_GROUP = 'audio';

/** The multivariant playlist: video rungs lowest first, each with the audio group (if any). */
export function multivariantPlaylist(video: HlsRendition[], audio: HlsRendition | null): string {
  const lines = ['#EXTM3U', `#EXT-X-VERSION:${HLS_VERSION}`, '#EXT-X-INDEPENDENT-SEGMENTS'];
  const audioRates = audio ? renditionBitrates(audio) : { peakBps: 0, averageBps: 0 };
  if (audio) {
    lines.push(`#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="${AUDIO_GROUP}",NAME="audio",DEFAULT=YES,AUTOSELECT=YES,URI="${mediaPlaylistName(audio.id)}"`);
  }
  for (const v of video) {
    const rates = renditionBitrates(v);
    const attrs = [
      `BANDWIDTH=${rates.peakBps + audioRates.peakBps}`,
      `AVERAGE-BANDWIDTH=${rates.averageBps + audioRates.averageBps}`,
      `RESOLUTION=${v.width}x${v.height}`,
      `CODECS="${[v.codecs, audio?.codecs].filter((c) => c).join(',')}"`,
    ];
    if (v.frameRate !== null) attrs.push(`FRAME-RATE=${v.frameRate.toFixed(3)}`);
    if (audio) attrs.push(`AUDIO="${AUDIO_GROUP}"`);
    lines.push(`#EXT-X-STREAM-INF:${attrs.join(',')}`, mediaPlaylistName(v.id));
  }
  return `${lines.join('\n')}\n`;
}

/** A representation of the MPD in `dir`, with its segments' real durations and sizes. */
function renditionOf(dir: string, rep: MpdRepresentation): HlsRendition {
  const files = segmentFiles(dir, rep.id);
  if (files.media.length === 0) throw new EncoderError('ENC_FFMPEG_FAILED', `representation ${rep.id} has no media segments in ${dir}`);
  const timing = trackTiming(readFileSync(files.init), files.init);
  return {
    id: rep.id,
    contentType: rep.contentType,
    initUri: basename(files.init),
    segments: files.media.map((path) => ({ uri: basename(path), durationS: segmentDurationS(readFileSync(path), timing, path), sizeBytes: statSync(path).size })),
    codecs: rep.codecs,
    width: rep.width,
    height: rep.height,
    frameRate: rep.frameRate,
  };
}

export interface HlsPlaylists {
  video: HlsRendition[];
  audio: HlsRendition | null;
}

/**
 * Writes `manifest.m3u8` and one media playlist per representation into a ladder
 * folder (its `manifest.mpd` and segment files). Also works on a ladder encoded before
 * the encoder wrote HLS: it only reads what is there.
 */
export function writeHlsPlaylists(dir: string): HlsPlaylists {
  const reps = readMpdRepresentations(readFileSync(join(dir, 'manifest.mpd'), 'utf8'));
  const video = reps.filter((r) => r.contentType === 'video').sort((a, b) => a.bandwidth - b.bandwidth).map((r) => renditionOf(dir, r));
  const audioRep = reps.find((r) => r.contentType === 'audio');
  const audio = audioRep ? renditionOf(dir, audioRep) : null;
  for (const r of [...video, ...(audio ? [audio] : [])]) writeFileSync(join(dir, mediaPlaylistName(r.id)), mediaPlaylist(r));
  writeFileSync(join(dir, MULTIVARIANT_PLAYLIST), multivariantPlaylist(video, audio));
  return { video, audio };
}
