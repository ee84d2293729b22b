/** Reading back what ffmpeg's DASH muxer wrote: the MPD's representations and each one's segment files. */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { XMLParser } from 'fast-xml-parser';

export interface MpdRepresentation {
  id: string;
  contentType: 'video' | 'audio';
  bandwidth: number;
  width: number;
  height: number;
  /** RFC 6381 codec string (e.g. `avc1.64001f`, `mp4a.40.2`); empty if the MPD has none. */
  codecs: string;
  /** Frames per second (Representation or AdaptationSet @frameRate, e.g. `25/1`); null if absent. */
  frameRate: number | null;
}

/** `25`, `30000/1001` -> frames per second; null if absent or malformed. */
function frameRateOf(value: unknown): number | null {
  if (value === undefined) return null;
  const [num, den = '1'] = String(value).split('/');
  const fps = Number(num) / Number(den);
  return Number.isFinite(fps) && fps > 0 ? fps : null;
}

/** Reads Representation@id, @bandwidth, size, codecs and frame rate from the MPD ffmpeg wrote. */
export function readMpdRepresentations(mpdText: string): MpdRepresentation[] {
  const parser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '', isArray: (name) => ['Period', 'AdaptationSet', 'Representation'].includes(name) });
  const doc = parser.parse(mpdText) as {
    MPD?: { Period?: Array<{ AdaptationSet?: Array<Record<string, unknown> & { Representation?: Array<Record<string, string>> }> }> };
  };
  const reps: MpdRepresentation[] = [];
  for (const period of doc.MPD?.Period ?? []) {
    for (const set of period.AdaptationSet ?? []) {
      for (const rep of set.Representation ?? []) {
        const mime = String(rep.mimeType ?? set.mimeType ?? '');
        const contentType = String(set.contentType ?? mime.split('/')[0]) === 'audio' ? 'audio' : 'video';
        reps.push({
          id: String(rep.id),
          contentType,
          bandwidth: Number(rep.bandwidth),
          width: Number(rep.width ?? 0),
          height: Number(rep.height ?? 0),
          codecs: String(rep.codecs ?? set.codecs ?? ''),
          frameRate: frameRateOf(rep.frameRate ?? set.frameRate),
        });
      }
    }
  }
  return reps;
}

/** The init segment and the media segments, in order, of one representation (the names of `plan.ts`'s templates). */
export function segmentFiles(dir: string, id: string): { init: string; media: string[] } {
  const pattern = new RegExp(`^chunk-${id.replace(/[^\w-]/g, '')}-(\\d+)\\.m4s$`);
  const media = readdirSync(dir)
    .map((name) => ({ name, m: pattern.exec(name) }))
    .filter((e): e is { name: string; m: RegExpExecArray } => e.m !== null)
    .sort((a, b) => Number(a.m[1]) - Number(b.m[1]))
    .map((e) => join(dir, e.name));
  return { init: join(dir, `init-${id}.m4s`), media };
}
