/**
 * Where a DASH ladder's segments are, from its MPD's SegmentTemplate (the encoder's
 * `init-$RepresentationID$.m4s` and `chunk-$RepresentationID$-$Number%05d$.m4s`,
 * startNumber 1), so the headless player requests exactly the URLs dash.js does.
 */
export interface SegmentLayout {
  /** The MPD's URL: the templates are relative to it. */
  mpdUrl: string;
  initTemplate: string;
  mediaTemplate: string;
  startNumber: number;
}

export class LayoutError extends Error {
  readonly code = 'HEADLESS_BAD_MPD';
}

function attr(tag: string, name: string): string | null {
  return new RegExp(`\\s${name}="([^"]*)"`).exec(tag)?.[1] ?? null;
}

/** The first SegmentTemplate of the MPD (the encoder writes the same one for every representation). */
export function parseLayout(mpdText: string, mpdUrl: string): SegmentLayout {
  const tag = /<SegmentTemplate\b[^>]*>/.exec(mpdText)?.[0];
  if (!tag) throw new LayoutError(`${mpdUrl}: no SegmentTemplate (the headless player reads the encoder's template layout)`);
  const initTemplate = attr(tag, 'initialization');
  const mediaTemplate = attr(tag, 'media');
  if (!initTemplate || !mediaTemplate) throw new LayoutError(`${mpdUrl}: SegmentTemplate without initialization or media: ${tag}`);
  const start = Number(attr(tag, 'startNumber') ?? '1');
  if (!Number.isInteger(start) || start < 0) throw new LayoutError(`${mpdUrl}: bad startNumber in ${tag}`);
  return { mpdUrl, initTemplate, mediaTemplate, startNumber: start };
}

/** $RepresentationID$ and $Number$ / $Number%0Nd$ (ISO/IEC 23009-1 5.3.9.4.4). */
function fill(template: string, id: string, number: number | null): string {
  return template.replace(/\$(RepresentationID|Number)(?:%0(\d+)d)?\$/g, (whole, name: string, width: string | undefined) => {
    if (name === 'RepresentationID') return id;
    if (number === null) return whole;
    return width ? String(number).padStart(Number(width), '0') : String(number);
  });
}

export function initUrl(l: SegmentLayout, representationId: string): string {
  return new URL(fill(l.initTemplate, representationId, null), l.mpdUrl).href;
}

/** Segment `index` (0-based) of a representation. */
export function segmentUrl(l: SegmentLayout, representationId: string, index: number): string {
  return new URL(fill(l.mediaTemplate, representationId, l.startNumber + index), l.mpdUrl).href;
}
