/**
 * CMAF HLS playlists (RFC 8216) over the DASH ladder's own fMP4 files, so one encode
 * serves DASH players and HLS players: `manifest.m3u8` (the multivariant playlist: one
 * variant per video rung, the audio as a rendition group) and `media-<id>.m3u8` per
 * representation (EXT-X-MAP to its init segment, one EXTINF per media segment).
 *
 * Every number comes from the files on disk: EXTINF is the segment's real duration
 * (its `trun` samples, fmp4.ts), CHANNELS the audio sample entry's channel count.
 * BANDWIDTH is the video rung's peak segment bit rate plus the audio's, and
 * AVERAGE-BANDWIDTH the sum of their average segment bit rates (RFC 8216 4.3.4.2: the
 * largest sum over a playable combination, here the one video and the one audio). The
 * peak is the RFC's (4.1), not the largest single segment: the highest bit rate of any
 * run of consecutive segments lasting half to one and a half target durations, so a
 * very short segment never sets it alone. Capped VBR still puts it well above the
 * MPD's @bandwidth; players that rank rungs by it still rank them in the same order.
 */
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { EncoderError } from './errors.js';
import { audioChannelCount, segmentDurationS, trackTiming } from './fmp4.js';
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
  /** Audio channels (the init segment's sample entry); null for video. */
  channels: number | null;
}

/** Throws unless every segment has a positive finite duration and size (a broken file, not a rounding). */
function checkSegments(segments: HlsSegment[], what: string): void {
  if (segments.length === 0) throw new EncoderError('ENC_FFMPEG_FAILED', `no media segments for ${what}`);
  for (const s of segments) {
    if (!(Number.isFinite(s.durationS) && s.durationS > 0)) throw new EncoderError('ENC_FFMPEG_FAILED', `${what}: segment ${s.uri} has no duration (${s.durationS} s)`);
    if (!(Number.isInteger(s.sizeBytes) && s.sizeBytes > 0)) throw new EncoderError('ENC_FFMPEG_FAILED', `${what}: segment ${s.uri} has no bytes (${s.sizeBytes})`);
  }
}

/**
 * EXT-X-TARGETDURATION: every EXTINF rounded to the nearest integer must not exceed it
 * (RFC 8216 4.3.3.1), so the longest one rounded; at least 1.
 */
export function targetDurationS(segments: Pick<HlsSegment, 'durationS'>[]): number {
  return Math.max(1, ...segments.map((s) => Math.round(s.durationS)));
}

/** Allowance for float sums of exact sample durations at the window's edges. */
const DURATION_EPSILON_S = 1e-9;

/**
 * The peak segment bit rate of a media playlist (RFC 8216 4.1), bits per second: the
 * highest bits / seconds of any run of consecutive segments whose total duration is
 * within [0.5, 1.5] x the target duration. A segment much shorter than the others only
 * counts with its neighbours, so a few hundred bytes in 10 ms cannot pass for the peak.
 * A playlist with no such run (shorter in all than half a target duration) has the
 * whole playlist's rate as its peak.
 */
export function peakSegmentBitrateBps(segments: HlsSegment[], what = 'media playlist'): number {
  checkSegments(segments, what);
  const targetS = targetDurationS(segments);
  const minS = 0.5 * targetS - DURATION_EPSILON_S;
  const maxS = 1.5 * targetS + DURATION_EPSILON_S;
  let peakBps = 0;
  for (let first = 0; first < segments.length; first++) {
    let bits = 0;
    let seconds = 0;
    for (let last = first; last < segments.length; last++) {
      bits += segments[last]!.sizeBytes * 8;
      seconds += segments[last]!.durationS;
      if (seconds > maxS) break;
      if (seconds >= minS) peakBps = Math.max(peakBps, bits / seconds);
    }
  }
  return peakBps > 0 ? peakBps : averageSegmentBitrateBps(segments, what);
}

/** The average segment bit rate of a media playlist (RFC 8216 4.1): all its bits over its whole duration. */
export function averageSegmentBitrateBps(segments: HlsSegment[], what = 'media playlist'): number {
  checkSegments(segments, what);
  const bits = segments.reduce((sum, s) => sum + s.sizeBytes * 8, 0);
  return bits / segments.reduce((sum, s) => sum + s.durationS, 0);
}

/** Peak and average segment bit rate of a rendition's media playlist, whole bits per second (rounded up). */
export function renditionBitrates(r: Pick<HlsRendition, 'id' | 'segments'>): { peakBps: number; averageBps: number } {
  const what = `representation ${r.id}`;
  return { peakBps: Math.ceil(peakSegmentBitrateBps(r.segments, what)), averageBps: Math.ceil(averageSegmentBitrateBps(r.segments, what)) };
}

/** A VOD media playlist. */
export function mediaPlaylist(r: Pick<HlsRendition, 'initUri' | 'segments'>): string {
  checkSegments(r.segments, r.initUri);
  const lines = [
    '#EXTM3U',
    `#EXT-X-VERSION:${HLS_VERSION}`,
    `#EXT-X-TARGETDURATION:${targetDurationS(r.segments)}`,
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
    // CHANNELS (RFC 8216 4.3.4.1): the most channels any of the rendition's segments
    // carries; one audio stream, so its sample entry's count. Players use it to pick a
    // rendition their output can play.
    if (audio.channels === null) throw new EncoderError('ENC_FFMPEG_FAILED', `audio representation ${audio.id}: its init segment is not a sound track`);
    lines.push(
      `#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="${AUDIO_GROUP}",NAME="audio",DEFAULT=YES,AUTOSELECT=YES,CHANNELS="${audio.channels}",URI="${mediaPlaylistName(audio.id)}"`,
    );
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
  const init = readFileSync(files.init);
  const timing = trackTiming(init, files.init);
  return {
    id: rep.id,
    contentType: rep.contentType,
    initUri: basename(files.init),
    segments: files.media.map((path) => ({ uri: basename(path), durationS: segmentDurationS(readFileSync(path), timing, path), sizeBytes: statSync(path).size })),
    codecs: rep.codecs,
    width: rep.width,
    height: rep.height,
    frameRate: rep.frameRate,
    channels: rep.contentType === 'audio' ? audioChannelCount(init, files.init) : null,
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
