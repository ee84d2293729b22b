/** Reads a playlist with m3u8-parser, a real HLS parser (video.js's), not the encoder's own idea of the format. */
import { Parser, type ParsedManifest } from 'm3u8-parser';

export interface ParsedPlaylist {
  manifest: ParsedManifest;
  /** What the parser warned about (ignored tags, missing attributes, ...). */
  warnings: string[];
  /** Every EXT-X-MEDIA's attributes as written: the parser keeps no CHANNELS of its own. */
  mediaTags: Record<string, string>[];
}

export function parseM3u8(text: string): ParsedPlaylist {
  const parser = new Parser();
  const warnings: string[] = [];
  const mediaTags: Record<string, string>[] = [];
  parser.on('warn', (w) => warnings.push(w.message));
  parser.parseStream.on('data', (e) => {
    if (e.type === 'tag' && e.tagType === 'media' && e.attributes) mediaTags.push(e.attributes);
  });
  parser.push(text);
  parser.end();
  return { manifest: parser.manifest, warnings, mediaTags };
}
