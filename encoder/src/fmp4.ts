/**
 * Reading and joining fragmented-MP4 segments by their boxes (ISO/IEC 14496-12).
 *  - The real duration of a media segment: the init segment's `mdhd` timescale and
 *    `trex` default, and each fragment's `tfhd` default and `trun` sample durations.
 *    The HLS playlists' EXTINF values come from here, so they match what a player will
 *    append (an AAC segment is a whole number of 1024-sample frames, never exactly the
 *    nominal 2 s).
 *  - The channel count of an audio track, from its sample entry (the HLS CHANNELS).
 *  - Appending a segment's fragments to the segment before it (tail.ts folds the
 *    audio's tiny last segment this way).
 */
import { EncoderError } from './errors.js';

interface Box {
  type: string;
  /** Offset of the box's first byte (its header). */
  at: number;
  /** Offset of the payload (after the header). */
  start: number;
  end: number;
}

const CONTAINERS = new Set(['moov', 'trak', 'mdia', 'minf', 'stbl', 'mvex', 'moof', 'traf']);

function boxesIn(view: DataView, start: number, end: number, what: string): Box[] {
  const out: Box[] = [];
  let at = start;
  while (at + 8 <= end) {
    let size = view.getUint32(at);
    const type = String.fromCharCode(view.getUint8(at + 4), view.getUint8(at + 5), view.getUint8(at + 6), view.getUint8(at + 7));
    let header = 8;
    if (size === 1) {
      size = Number(view.getBigUint64(at + 8));
      header = 16;
    } else if (size === 0) {
      size = end - at;
    }
    if (size < header || at + size > end) throw new EncoderError('ENC_FFMPEG_FAILED', `${what}: box ${JSON.stringify(type)} at byte ${at} overruns its parent`);
    out.push({ type, at, start: at + header, end: at + size });
    at += size;
  }
  return out;
}

/** Every box of `path` (e.g. `['moov', 'trak', 'mdia', 'mdhd']`) below the top level. */
function find(view: DataView, path: string[], what: string, from: Box = { type: '', at: 0, start: 0, end: view.byteLength }): Box[] {
  const [head, ...rest] = path;
  const matches = boxesIn(view, from.start, from.end, what).filter((b) => b.type === head);
  if (rest.length === 0) return matches;
  return matches.filter((b) => CONTAINERS.has(b.type)).flatMap((b) => find(view, rest, what, b));
}

function viewOf(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** What a media segment's duration needs from its init segment (one track per file, as the encoder writes). */
export interface TrackTiming {
  timescale: number;
  /** `trex` default_sample_duration; 0 if absent. */
  defaultSampleDuration: number;
}

export function trackTiming(init: Uint8Array, what = 'init segment'): TrackTiming {
  const view = viewOf(init);
  const mdhd = find(view, ['moov', 'trak', 'mdia', 'mdhd'], what)[0];
  if (!mdhd) throw new EncoderError('ENC_FFMPEG_FAILED', `${what}: no moov/trak/mdia/mdhd box`);
  // FullBox: version(1) flags(3); v1 has 64-bit creation/modification times.
  const version = view.getUint8(mdhd.start);
  const timescale = view.getUint32(mdhd.start + (version === 1 ? 20 : 12));
  if (timescale === 0) throw new EncoderError('ENC_FFMPEG_FAILED', `${what}: mdhd timescale is 0`);
  const trex = find(view, ['moov', 'mvex', 'trex'], what)[0];
  // trex: FullBox header(4) track_ID(4) default_sample_description_index(4) default_sample_duration(4).
  const defaultSampleDuration = trex ? view.getUint32(trex.start + 12) : 0;
  return { timescale, defaultSampleDuration };
}

/** The media segment's duration in `mdhd` timescale ticks: the sum of its samples' durations. */
export function segmentDurationTicks(segment: Uint8Array, timing: TrackTiming, what = 'media segment'): number {
  const view = viewOf(segment);
  let ticks = 0;
  const trafs = find(view, ['moof', 'traf'], what);
  if (trafs.length === 0) throw new EncoderError('ENC_FFMPEG_FAILED', `${what}: no moof/traf box`);
  for (const traf of trafs) {
    let defaultDuration = timing.defaultSampleDuration;
    const tfhd = find(view, ['tfhd'], what, traf)[0];
    if (tfhd) {
      const flags = view.getUint32(tfhd.start) & 0xffffff;
      // tfhd optional fields in order: base_data_offset(8), sample_description_index(4), default_sample_duration(4).
      let at = tfhd.start + 8;
      if (flags & 0x1) at += 8;
      if (flags & 0x2) at += 4;
      if (flags & 0x8) defaultDuration = view.getUint32(at);
    }
    for (const trun of find(view, ['trun'], what, traf)) {
      const flags = view.getUint32(trun.start) & 0xffffff;
      const count = view.getUint32(trun.start + 4);
      let at = trun.start + 8;
      if (flags & 0x1) at += 4; // data_offset
      if (flags & 0x4) at += 4; // first_sample_flags
      const perSample = [0x100, 0x200, 0x400, 0x800].filter((f) => flags & f).length * 4;
      if (!(flags & 0x100)) {
        ticks += count * defaultDuration;
        continue;
      }
      for (let i = 0; i < count; i++) ticks += view.getUint32(at + i * perSample);
    }
  }
  return ticks;
}

/** The media segment's duration in seconds. */
export function segmentDurationS(segment: Uint8Array, timing: TrackTiming, what = 'media segment'): number {
  return segmentDurationTicks(segment, timing, what) / timing.timescale;
}

/**
 * The channel count of an audio track: its `AudioSampleEntry` channelcount (what the
 * file itself declares, so the playlist cannot disagree with the media). Null for a
 * track that is not sound (`hdlr` type other than `soun`).
 */
export function audioChannelCount(init: Uint8Array, what = 'init segment'): number | null {
  const view = viewOf(init);
  const hdlr = find(view, ['moov', 'trak', 'mdia', 'hdlr'], what)[0];
  if (!hdlr) throw new EncoderError('ENC_FFMPEG_FAILED', `${what}: no moov/trak/mdia/hdlr box`);
  // hdlr: FullBox header(4) pre_defined(4) handler_type(4).
  const handler = String.fromCharCode(...init.subarray(hdlr.start + 8, hdlr.start + 12));
  if (handler !== 'soun') return null;
  const stsd = find(view, ['moov', 'trak', 'mdia', 'minf', 'stbl', 'stsd'], what)[0];
  // stsd: FullBox header(4) entry_count(4), then the sample entries as boxes.
  const entry = stsd ? boxesIn(view, stsd.start + 8, stsd.end, what)[0] : undefined;
  // AudioSampleEntry: reserved(6) data_reference_index(2) reserved(8) channelcount(2).
  if (!entry || entry.end - entry.start < 18) throw new EncoderError('ENC_FFMPEG_FAILED', `${what}: no audio sample entry in stsd`);
  const channels = view.getUint16(entry.start + 16);
  if (channels === 0) throw new EncoderError('ENC_FFMPEG_FAILED', `${what}: the ${entry.type} sample entry declares 0 channels`);
  return channels;
}

/**
 * `segment` followed by the fragments (`moof` + `mdat`, and any other box but `styp`
 * and `sidx`) of `tail`: one segment of several fragments, as CMAF allows. The
 * fragments keep their own `tfdt` and sequence numbers, which already continue the
 * segment's, and their `trun` offsets are relative to their `moof` (ffmpeg sets
 * default-base-is-moof; a `tfhd` with an absolute base offset is refused), so they
 * stay valid where they land. The segment's `sidx`, if any, grows its last reference
 * by the bytes and the duration appended, so it still indexes the whole segment.
 */
export function appendFragments(segment: Uint8Array, tail: Uint8Array, timing: TrackTiming, what = 'media segment'): Uint8Array {
  const tailView = viewOf(tail);
  for (const tfhd of find(tailView, ['moof', 'traf', 'tfhd'], what)) {
    if (tailView.getUint32(tfhd.start) & 0x1) throw new EncoderError('ENC_FFMPEG_FAILED', `${what}: tfhd has an absolute base_data_offset, which moving the fragment would break`);
  }
  const kept = boxesIn(tailView, 0, tail.byteLength, what).filter((b) => b.type !== 'styp' && b.type !== 'sidx');
  if (!kept.some((b) => b.type === 'moof')) throw new EncoderError('ENC_FFMPEG_FAILED', `${what}: no moof box to append`);
  const parts = kept.map((b) => tail.subarray(b.at, b.end));
  const appendedBytes = parts.reduce((n, p) => n + p.byteLength, 0);
  const out = new Uint8Array(segment.byteLength + appendedBytes);
  out.set(segment, 0);
  let at = segment.byteLength;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  const outView = viewOf(out);
  const sidx = boxesIn(outView, 0, segment.byteLength, what).find((b) => b.type === 'sidx');
  if (sidx) growLastSidxReference(outView, sidx, appendedBytes, segmentDurationTicks(tail, timing, what), timing.timescale, what);
  return out;
}

/** Adds `bytes` and `ticks` (in `timescale`) to the last reference of a `sidx` box, in place. */
function growLastSidxReference(view: DataView, sidx: Box, bytes: number, ticks: number, timescale: number, what: string): void {
  // sidx: FullBox header(4) reference_ID(4) timescale(4), then earliest_presentation_time
  // and first_offset (4 bytes each in version 0, 8 in version 1), reserved(2)
  // reference_count(2), and 12 bytes per reference: type(1 bit) + size(31), duration(4), SAP(4).
  const version = view.getUint8(sidx.start);
  const sidxTimescale = view.getUint32(sidx.start + 8);
  const countAt = sidx.start + 12 + (version === 0 ? 8 : 16) + 2;
  const count = view.getUint16(countAt);
  if (count === 0 || countAt + 2 + count * 12 > sidx.end) throw new EncoderError('ENC_FFMPEG_FAILED', `${what}: sidx has no usable reference`);
  const ref = countAt + 2 + (count - 1) * 12;
  const typeAndSize = view.getUint32(ref);
  if (typeAndSize & 0x80000000) throw new EncoderError('ENC_FFMPEG_FAILED', `${what}: the last sidx reference points to another sidx`);
  const size = typeAndSize + bytes;
  if (size > 0x7fffffff) throw new EncoderError('ENC_FFMPEG_FAILED', `${what}: the joined segment is too large for its sidx`);
  view.setUint32(ref, size);
  view.setUint32(ref + 4, view.getUint32(ref + 4) + Math.round((ticks * sidxTimescale) / timescale));
}
