/**
 * Where a player plugin gets the encoder's per-segment sizes (the `segments` option):
 * the URL of its `segments.json`, a function that returns (a promise of) that
 * file's content, or by default `segments.json` beside the manifest. Whatever the
 * source, the content is checked by the encoder's own validator.
 */
import { parseSegmentsSidecar, type SegmentsSidecar } from '@sammy/encoder/sidecar';
import { SammyConfigError } from '../abr/config.js';
import type { SegmentsOption } from './options.js';

/** The player never waits longer than this for the sizes before the manifest goes out. */
export const SEGMENTS_TIMEOUT_MS = 10_000;

export function checkSegmentsOption(option: unknown): SegmentsOption | undefined {
  if (option === undefined || typeof option === 'function' || (typeof option === 'string' && option !== '')) return option as SegmentsOption | undefined;
  throw new SammyConfigError(
    `invalid segments: ${JSON.stringify(option)} (accepted: the URL of segments.json, or a function returning its content)`,
  );
}

async function fetchJson(url: string): Promise<unknown> {
  const res = await fetch(url, { cache: 'no-cache' });
  if (!res.ok) throw new Error(`HTTP ${res.status}`);
  return res.json();
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms / 1000} s`)), ms);
    p.then(
      (v) => (clearTimeout(timer), resolve(v)),
      (err: unknown) => (clearTimeout(timer), reject(err)),
    );
  });
}

/**
 * Loads and checks the sizes. `manifestUrl` (absolute) is needed only by the default
 * source; `baseUrl` resolves a relative URL option (the page's address).
 */
export async function loadSegments(option: SegmentsOption | undefined, manifestUrl: string | null, baseUrl: string): Promise<SegmentsSidecar> {
  let what: string;
  let content: Promise<unknown>;
  if (typeof option === 'function') {
    what = 'the segments function';
    content = Promise.resolve().then(option);
  } else {
    if (option === undefined && manifestUrl === null) throw new Error('no segments option and no manifest URL to find segments.json beside');
    const url = option === undefined ? new URL('segments.json', manifestUrl!).href : new URL(option, baseUrl).href;
    what = url;
    content = fetchJson(url);
  }
  try {
    return parseSegmentsSidecar(await withTimeout(content, SEGMENTS_TIMEOUT_MS, what));
  } catch (err) {
    throw new Error(`cannot load the segment sizes from ${what}: ${(err as Error).message}`);
  }
}
