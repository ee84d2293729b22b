/**
 * Runs the real encoder CLI with the real ffmpeg. Skipped, with the reason printed,
 * only where ffmpeg is not installed (CI installs it).
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readMpdRepresentations } from '../src/mpd.js';
import { parseSegmentsSidecar } from '../src/sidecar.js';
import { foldAudioTails } from '../src/tail.js';
import { parseM3u8 } from './parse-hls.js';

const here = dirname(fileURLToPath(import.meta.url));
const cli = join(here, '..', 'src', 'cli.ts');
const tsx = createRequire(import.meta.url).resolve('tsx/cli');
const hasFfmpeg = spawnSync('ffmpeg', ['-version'], { stdio: 'ignore' }).status === 0;
if (!hasFfmpeg) console.warn('SKIP encoder integration tests: ffmpeg is not installed (sudo apt-get install -y ffmpeg)');
const describeWithFfmpeg = hasFfmpeg ? describe : describe.skip;

function encode(args: string[], env: NodeJS.ProcessEnv = process.env) {
  const run = spawnSync(process.execPath, [tsx, cli, ...args], { encoding: 'utf8', env, timeout: 180_000 });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** The error line the CLI printed, with the progress lines filtered out. */
function errorLines(stderr: string): string[] {
  return stderr.split('\n').filter((l) => l.startsWith('encode: error:'));
}

function leftovers(parent: string): string[] {
  return existsSync(parent) ? readdirSync(parent) : [];
}

interface ProbedSegment {
  sizeBytes: number;
  durationS: number;
}

/**
 * A representation's media segments as ffprobe sees them (not through the encoder's
 * box reader): sizes on disk; durations from the packets' timestamps, each segment
 * from its first packet to the next segment's first, the last to its last packet's end.
 */
function probeSegments(dir: string, id: string, uris: string[]): ProbedSegment[] {
  const paths = uris.map((u) => join(dir, u));
  const initPath = join(dir, `init-${id}.m4s`);
  const probe = spawnSync('ffprobe', ['-v', 'error', '-show_entries', 'packet=pos,pts_time,duration_time', '-of', 'json', `concat:${[initPath, ...paths].join('|')}`], { encoding: 'utf8' });
  const packets = (JSON.parse(probe.stdout) as { packets: { pos: string; pts_time: string; duration_time?: string }[] }).packets;
  // Byte ranges of each segment in the concatenation, after the init segment.
  let at = statSync(initPath).size;
  const ranges = paths.map((p) => {
    const range = { from: at, to: at + statSync(p).size };
    at = range.to;
    return range;
  });
  const firstS = ranges.map(() => Infinity);
  let endS = -Infinity;
  for (const p of packets) {
    const ptsS = Number(p.pts_time);
    endS = Math.max(endS, ptsS + Number(p.duration_time ?? 0));
    const k = ranges.findIndex((r) => Number(p.pos) >= r.from && Number(p.pos) < r.to);
    firstS[k] = Math.min(firstS[k]!, ptsS);
  }
  return ranges.map((r, k) => ({ sizeBytes: r.to - r.from, durationS: (k + 1 < ranges.length ? firstS[k + 1]! : endS) - firstS[k]! }));
}

/** RFC 8216 4.1's peak segment bit rate, by brute force: the best run of segments lasting 0.5-1.5 target durations. */
function rfcPeakBps(segments: ProbedSegment[], targetS: number): number {
  let peakBps = 0;
  for (let i = 0; i < segments.length; i++) {
    for (let j = i; j < segments.length; j++) {
      const run = segments.slice(i, j + 1);
      const seconds = run.reduce((a, s) => a + s.durationS, 0);
      if (seconds >= 0.5 * targetS - 1e-3 && seconds <= 1.5 * targetS + 1e-3) peakBps = Math.max(peakBps, (run.reduce((a, s) => a + s.sizeBytes, 0) * 8) / seconds);
    }
  }
  return peakBps;
}

/** Segments the MPD addresses for a representation: mediaPresentationDuration over its SegmentTemplate duration. */
function mpdSegmentCount(mpd: string): number {
  const [, minutes = '0', seconds = '0'] = /mediaPresentationDuration="PT(?:(\d+)M)?(?:([\d.]+)S)?"/.exec(mpd)!;
  const template = /<SegmentTemplate timescale="(\d+)" duration="(\d+)"/.exec(mpd)!;
  return Math.ceil((Number(minutes) * 60 + Number(seconds)) / (Number(template[2]) / Number(template[1])));
}

describeWithFfmpeg('encode --synthetic 8 with the lab ladder', () => {
  const parent = mkdtempSync(join(tmpdir(), 'encode-'));
  const out = join(parent, 'ladder');
  let run: ReturnType<typeof encode>;
  afterAll(() => rmSync(parent, { recursive: true, force: true }));

  beforeAll(() => {
    run = encode(['--synthetic', '8', '--out', out]);
  }, 200_000);

  test('exits 0, reports progress and the real-time factor', () => {
    expect(run.stderr).toMatch(/encode (\d+)%|\] +\d+%/);
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/5 video rungs x 4 segments.*x real time/);
  });

  test('manifest.mpd has at least 5 video Representations with SegmentTemplate', () => {
    const mpd = readFileSync(join(out, 'manifest.mpd'), 'utf8');
    expect(mpd).toContain('<SegmentTemplate');
    const video = readMpdRepresentations(mpd).filter((r) => r.contentType === 'video');
    expect(video.length).toBeGreaterThanOrEqual(5);
    expect(Math.max(...video.map((r) => r.bandwidth))).toBe(1_050_000);
  });

  test('segments.json matches the MPD and the files on disk', () => {
    const sidecar = parseSegmentsSidecar(JSON.parse(readFileSync(join(out, 'segments.json'), 'utf8')));
    const mpdVideo = readMpdRepresentations(readFileSync(join(out, 'manifest.mpd'), 'utf8')).filter((r) => r.contentType === 'video');
    expect(sidecar.segmentDurationS).toBe(2);
    expect(sidecar.representations.map((r) => [r.id, r.bitrateKbps])).toEqual(mpdVideo.map((r) => [r.id, r.bandwidth / 1000]));
    const counts = new Set(sidecar.representations.map((r) => r.segmentSizesBytes.length));
    expect([...counts]).toEqual([4]);
    for (const rep of sidecar.representations) {
      const onDisk = rep.segmentSizesBytes.map((_, k) => statSync(join(out, `chunk-${rep.id}-${String(k + 1).padStart(5, '0')}.m4s`)).size);
      expect(rep.segmentSizesBytes).toEqual(onDisk);
      expect(existsSync(join(out, `chunk-${rep.id}-00005.m4s`))).toBe(false);
      expect(rep.ssim).toHaveLength(4);
      for (const s of rep.ssim) expect(s).toBeGreaterThan(0.3);
    }
  });

  test("each rung's measured mean bitrate is within 25% of its declared bitrate", () => {
    const sidecar = parseSegmentsSidecar(JSON.parse(readFileSync(join(out, 'segments.json'), 'utf8')));
    const durationS = sidecar.segmentDurationS * sidecar.representations[0]!.segmentSizesBytes.length;
    for (const rep of sidecar.representations) {
      const measuredKbps = (rep.segmentSizesBytes.reduce((a, b) => a + b, 0) * 8) / durationS / 1000;
      expect(Math.abs(measuredKbps / rep.bitrateKbps - 1)).toBeLessThan(0.25);
    }
  });

  test('higher rungs score higher mean SSIM', () => {
    const sidecar = parseSegmentsSidecar(JSON.parse(readFileSync(join(out, 'segments.json'), 'utf8')));
    const means = sidecar.representations.map((r) => r.meanSsim);
    expect(means[means.length - 1]!).toBeGreaterThan(means[0]!);
  });

  test('every segment starts with a keyframe (aligned segment boundaries)', () => {
    const rep = '4';
    const files = [join(out, `init-${rep}.m4s`), ...[1, 2, 3, 4].map((k) => join(out, `chunk-${rep}-0000${k}.m4s`))];
    const probe = spawnSync(
      'ffprobe',
      ['-v', 'error', '-select_streams', 'v', '-show_entries', 'frame=key_frame,pts_time', '-of', 'csv=p=0', `concat:${files.join('|')}`],
      { encoding: 'utf8' },
    );
    const keyTimes = probe.stdout
      .trim()
      .split('\n')
      .map((l) => l.split(','))
      .filter(([key]) => key === '1')
      .map(([, t]) => Math.round(Number(t)));
    expect(keyTimes).toEqual([0, 2, 4, 6]);
  });

  test('HLS: m3u8-parser reads the multivariant playlist: every rung with its average bitrate, resolution and codecs, the audio with CHANNELS', () => {
    const sidecar = parseSegmentsSidecar(JSON.parse(readFileSync(join(out, 'segments.json'), 'utf8')));
    const { manifest, warnings, mediaTags } = parseM3u8(readFileSync(join(out, 'manifest.m3u8'), 'utf8'));
    expect(warnings).toEqual([]);
    expect(mediaTags).toHaveLength(1);
    expect(mediaTags[0]).toMatchObject({ TYPE: 'AUDIO', 'GROUP-ID': 'audio', URI: `media-${sidecar.audio!.id}.m3u8` });
    // CHANNELS is what ffprobe finds in the audio stream (the source is stereo).
    const probe = spawnSync('ffprobe', ['-v', 'error', '-show_entries', 'stream=channels', '-of', 'csv=p=0', `concat:${join(out, `init-${sidecar.audio!.id}.m4s`)}|${join(out, `chunk-${sidecar.audio!.id}-00001.m4s`)}`], { encoding: 'utf8' });
    expect(probe.stdout.trim()).toBe('2');
    expect(mediaTags[0]!.CHANNELS).toBe(probe.stdout.trim());
    const variants = manifest.playlists!;
    expect(variants.map((v) => v.uri)).toEqual(sidecar.representations.map((r) => `media-${r.id}.m3u8`));
    const audioBits = sidecar.audio!.segmentSizesBytes.reduce((a, b) => a + b, 0) * 8;
    variants.forEach((v, i) => {
      const rep = sidecar.representations[i]!;
      const average = Number(v.attributes['AVERAGE-BANDWIDTH']);
      // Average over 8 s of video plus the audio; the peak of capped VBR is above both.
      const expectedAverage = (rep.segmentSizesBytes.reduce((a, b) => a + b, 0) * 8 + audioBits) / 8;
      expect(Math.abs(average / expectedAverage - 1)).toBeLessThan(0.01);
      expect(v.attributes.BANDWIDTH).toBeGreaterThan(average);
      expect(v.attributes.RESOLUTION).toEqual({ width: rep.width, height: rep.height });
      expect(v.attributes.CODECS).toMatch(/^avc1\.[0-9a-f]{6},mp4a\.40\.2$/);
      expect(v.attributes.AUDIO).toBe('audio');
    });
  });

  test("HLS: each variant's BANDWIDTH is within 5% of RFC 8216's peak, video plus audio, from the files as ffprobe reads them", () => {
    const { manifest } = parseM3u8(readFileSync(join(out, 'manifest.m3u8'), 'utf8'));
    const audioUri = parseM3u8(readFileSync(join(out, 'manifest.m3u8'), 'utf8')).mediaTags[0]!.URI!;
    const peakOf = (uri: string): number => {
      const media = parseM3u8(readFileSync(join(out, uri), 'utf8')).manifest;
      const id = /^media-(.+)\.m3u8$/.exec(uri)![1]!;
      const segments = probeSegments(out, id, media.segments.map((s) => s.uri));
      // The probed durations agree with the playlist's EXTINF.
      for (const [k, s] of segments.entries()) expect(Math.abs(s.durationS - media.segments[k]!.duration)).toBeLessThan(0.025);
      return rfcPeakBps(segments, media.targetDuration!);
    };
    const audioPeakBps = peakOf(audioUri);
    for (const v of manifest.playlists!) {
      const expectedBps = peakOf(v.uri) + audioPeakBps;
      expect(Math.abs(v.attributes.BANDWIDTH! / expectedBps - 1)).toBeLessThan(0.05);
    }
  });

  test('audio and video have the same segment count: on disk, in segments.json, in the playlists, and the count the MPD addresses', () => {
    const sidecar = parseSegmentsSidecar(JSON.parse(readFileSync(join(out, 'segments.json'), 'utf8')));
    const audioId = sidecar.audio!.id;
    const addressed = mpdSegmentCount(readFileSync(join(out, 'manifest.mpd'), 'utf8'));
    expect(addressed).toBe(4);
    expect(sidecar.audio!.segmentSizesBytes).toHaveLength(addressed);
    expect(readdirSync(out).filter((f) => f.startsWith(`chunk-${audioId}-`))).toHaveLength(addressed);
    for (const id of [...sidecar.representations.map((r) => r.id), audioId]) {
      expect(parseM3u8(readFileSync(join(out, `media-${id}.m3u8`), 'utf8')).manifest.segments).toHaveLength(addressed);
    }
  });

  test("no audio is lost: the addressed segments reach the video's end, and the last one's sidx indexes all of it", () => {
    const sidecar = parseSegmentsSidecar(JSON.parse(readFileSync(join(out, 'segments.json'), 'utf8')));
    const id = sidecar.audio!.id;
    const uris = sidecar.audio!.segmentSizesBytes.map((_, k) => `chunk-${id}-${String(k + 1).padStart(5, '0')}.m4s`);
    const segments = probeSegments(out, id, uris);
    // AAC starts with a priming frame 21 ms before zero; the frames reach 8 s.
    expect(segments.reduce((a, s) => a + s.durationS, 0)).toBeGreaterThanOrEqual(8);
    const last = readFileSync(join(out, uris.at(-1)!));
    const moofs = [];
    let sidxAt = -1;
    for (let at = 0; at < last.length; at += last.readUInt32BE(at)) {
      const type = last.toString('latin1', at + 4, at + 8);
      if (type === 'moof') moofs.push(at);
      if (type === 'sidx') sidxAt = at;
    }
    // The folded tail is a second fragment; one sidx reference spans both.
    expect(moofs).toHaveLength(2);
    const version = last[sidxAt + 8]!;
    const refAt = sidxAt + 8 + 12 + (version === 0 ? 8 : 16) + 4;
    expect(last.readUInt16BE(refAt - 2)).toBe(1);
    expect(last.readUInt32BE(refAt) & 0x7fffffff).toBe(last.length - (sidxAt + last.readUInt32BE(sidxAt)));
    const sidxTimescale = last.readUInt32BE(sidxAt + 16);
    expect(last.readUInt32BE(refAt + 4) / sidxTimescale).toBeCloseTo(segments.at(-1)!.durationS, 3);
  });

  test('audio that runs on past the video is refused with a clear error, not folded into one oversized segment', () => {
    const copy = join(parent, 'overhang');
    cpSync(out, copy, { recursive: true });
    try {
      const reps = readMpdRepresentations(readFileSync(join(copy, 'manifest.mpd'), 'utf8'));
      const audioId = reps.find((r) => r.contentType === 'audio')!.id;
      // Two more 2 s audio segments than the video's 4.
      copyFileSync(join(copy, `chunk-${audioId}-00002.m4s`), join(copy, `chunk-${audioId}-00005.m4s`));
      copyFileSync(join(copy, `chunk-${audioId}-00003.m4s`), join(copy, `chunk-${audioId}-00006.m4s`));
      expect(() => foldAudioTails(copy, reps, 4, 2)).toThrow(/the audio runs 4\.0\d s \(2 segments\) past the video's 4 segments/);
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });

  test('HLS: each media playlist maps its init segment and lists every segment on disk with its real duration', () => {
    const sidecar = parseSegmentsSidecar(JSON.parse(readFileSync(join(out, 'segments.json'), 'utf8')));
    for (const id of [...sidecar.representations.map((r) => r.id), sidecar.audio!.id]) {
      const text = readFileSync(join(out, `media-${id}.m3u8`), 'utf8');
      expect(text).toContain(`#EXT-X-MAP:URI="init-${id}.m4s"`);
      expect(text.trimEnd().endsWith('#EXT-X-ENDLIST')).toBe(true);
      const entries = [...text.matchAll(/#EXTINF:([\d.]+),\n(.*)/g)].map(([, d, uri]) => ({ durationS: Number(d), uri: uri! }));
      const onDisk = readdirSync(out).filter((f) => f.startsWith(`chunk-${id}-`)).sort();
      expect(entries.map((e) => e.uri)).toEqual(onDisk);
      const target = Number(/#EXT-X-TARGETDURATION:(\d+)/.exec(text)![1]);
      for (const e of entries) expect(Math.round(e.durationS)).toBeLessThanOrEqual(target);
      // The durations add up to the encoded length (AAC frames make audio segments uneven).
      expect(Math.abs(entries.reduce((a, e) => a + e.durationS, 0) - 8)).toBeLessThan(0.1);
    }
    // Video segments are exactly 2 s (keyframes every 2 s), as the MPD says.
    const video = readFileSync(join(out, 'media-4.m3u8'), 'utf8');
    expect([...video.matchAll(/#EXTINF:([\d.]+),/g)].map((m) => Number(m[1]))).toEqual([2, 2, 2, 2]);
  });

  test('HLS: ffprobe reads the multivariant playlist: every rung and the audio, all 8 s of frames through the top variant', () => {
    const probe = spawnSync('ffprobe', ['-v', 'error', '-show_entries', 'format=duration:stream=codec_type,width,height', '-of', 'json', join(out, 'manifest.m3u8')], { encoding: 'utf8' });
    expect(probe.status).toBe(0);
    const info = JSON.parse(probe.stdout) as { format: { duration: string }; streams: { codec_type: string; width?: number; height?: number }[] };
    expect(Math.abs(Number(info.format.duration) - 8)).toBeLessThan(0.1);
    const sidecar = parseSegmentsSidecar(JSON.parse(readFileSync(join(out, 'segments.json'), 'utf8')));
    const sizes = new Set(info.streams.filter((s) => s.codec_type === 'video').map((s) => `${s.width}x${s.height}`));
    expect([...sizes].sort()).toEqual(sidecar.representations.map((r) => `${r.width}x${r.height}`).sort());
    expect(info.streams.some((s) => s.codec_type === 'audio')).toBe(true);
    const frames = spawnSync('ffprobe', ['-v', 'error', '-select_streams', 'v:4', '-count_packets', '-show_entries', 'stream=nb_read_packets,r_frame_rate', '-of', 'json', join(out, 'manifest.m3u8')], { encoding: 'utf8' });
    const stream = (JSON.parse(frames.stdout) as { streams: { nb_read_packets: string; r_frame_rate: string }[] }).streams[0]!;
    const [num, den] = stream.r_frame_rate.split('/').map(Number);
    expect(Number(stream.nb_read_packets)).toBe(Math.round((8 * num!) / den!));
  });

  test('no partial folder is left beside the ladder', () => {
    expect(leftovers(parent)).toEqual(['ladder']);
  });
});

describeWithFfmpeg('encoder errors: one clear line, non-zero exit, no ladder left behind', () => {
  const parent = mkdtempSync(join(tmpdir(), 'encode-err-'));
  afterAll(() => rmSync(parent, { recursive: true, force: true }));

  test('missing input', () => {
    const run = encode(['--input', join(parent, 'nope.mp4'), '--out', join(parent, 'a')]);
    expect(run.status).not.toBe(0);
    expect(errorLines(run.stderr)).toEqual([`encode: error: input file not found: ${join(parent, 'nope.mp4')}`]);
    expect(existsSync(join(parent, 'a'))).toBe(false);
  }, 60_000);

  test('a text file as input', () => {
    const text = join(parent, 'notes.txt');
    writeFileSync(text, 'this is not a video\n');
    const run = encode(['--input', text, '--out', join(parent, 'b')]);
    expect(run.status).not.toBe(0);
    const lines = errorLines(run.stderr);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/notes\.txt is not a video file/);
    expect(existsSync(join(parent, 'b'))).toBe(false);
  }, 60_000);

  test('an unwritable output folder', () => {
    // Root may write anywhere, so make the output's parent a regular file (ENOTDIR);
    // without root, a read-only folder is also tried.
    const blocker = join(parent, 'file-not-folder');
    writeFileSync(blocker, '');
    const targets = [join(blocker, 'ladder')];
    if (process.getuid?.() !== 0) {
      const ro = join(parent, 'read-only');
      spawnSync('mkdir', [ro]);
      chmodSync(ro, 0o555);
      targets.push(join(ro, 'ladder'));
    }
    for (const target of targets) {
      const run = encode(['--synthetic', '4', '--out', target]);
      expect(run.status).not.toBe(0);
      const lines = errorLines(run.stderr);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/cannot write to output folder/);
      expect(existsSync(target)).toBe(false);
    }
  }, 60_000);

  test('ffmpeg missing from PATH names the install command', () => {
    const run = encode(['--synthetic', '4', '--out', join(parent, 'c')], { ...process.env, PATH: '/nonexistent' });
    expect(run.status).not.toBe(0);
    expect(errorLines(run.stderr)).toEqual(['encode: error: ffmpeg was not found on PATH; install it with: sudo apt-get install -y ffmpeg']);
    expect(existsSync(join(parent, 'c'))).toBe(false);
  }, 60_000);

  test('a folder that is not a ladder is never overwritten', () => {
    const other = join(parent, 'photos');
    spawnSync('mkdir', [other]);
    writeFileSync(join(other, 'holiday.jpg'), 'x');
    const run = encode(['--synthetic', '4', '--out', other]);
    expect(run.status).not.toBe(0);
    expect(errorLines(run.stderr)[0]).toMatch(/is not empty and holds no ladder/);
    expect(readdirSync(other)).toEqual(['holiday.jpg']);
  }, 60_000);

  test('bad arguments exit 2 with usage', () => {
    const run = encode(['--synthetic', 'ten', '--out', join(parent, 'd')]);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/--synthetic takes a number of seconds/);
  }, 60_000);

  test('nothing but the test fixtures is left in the parent folder', () => {
    expect(leftovers(parent).sort()).toEqual(['file-not-folder', 'notes.txt', 'photos', ...(process.getuid?.() !== 0 ? ['read-only'] : [])].sort());
  });
});
