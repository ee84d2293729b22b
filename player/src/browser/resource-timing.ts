/**
 * A chunk's network time from the Resource Timing API: request sent to first byte and
 * to last byte. A player's own timing (dash.js: from before `xhr.send()` to the
 * `loadend` event) is delayed by a busy main thread (on loopback at startup it tripled
 * a chunk's time).
 */

export interface ChunkTiming {
  /** Request sent to last byte. */
  downloadS: number;
  /** Request sent to first byte (the round trip and the server's start); null when the entry has none. */
  firstByteS: number | null;
  /**
   * The body came from the browser's own cache, not over the network: Resource Timing's
   * `transferSize` (headers and body as they crossed the network) is below the body's
   * size: 0 for a cache hit, the headers' few hundred bytes for a hit revalidated with a
   * 304 (which a player sees as a 200). Null when the entry says neither: a
   * cross-origin answer without `Timing-Allow-Origin` hides both sizes.
   */
  fromCache: boolean | null;
  /** The protocol that carried it (`nextHopProtocol`: `http/1.1`, `h2`, `h3`); null when the entry says none. */
  protocol: string | null;
}

/** The latest fetch of `url`, from request to first and last byte; null when the browser has no entry. */
export function resourceTiming(url: string): ChunkTiming | null {
  if (typeof performance === 'undefined' || typeof performance.getEntriesByName !== 'function' || typeof location === 'undefined') return null;
  const entries = performance.getEntriesByName(new URL(url, location.href).href, 'resource') as PerformanceResourceTiming[];
  const e = entries.at(-1);
  if (!e || e.responseEnd <= 0) return null;
  const start = e.requestStart > 0 ? e.requestStart : e.startTime;
  const ms = e.responseEnd - start;
  if (!(ms > 0)) return null;
  const firstMs = e.responseStart - start;
  return {
    downloadS: ms / 1000,
    firstByteS: e.responseStart > 0 && firstMs >= 0 && firstMs <= ms ? firstMs / 1000 : null,
    fromCache: e.encodedBodySize > 0 ? e.transferSize < e.encodedBodySize : e.transferSize > 0 ? false : null,
    protocol: e.nextHopProtocol || null,
  };
}

/** Resource Timing keeps 250 entries by default; a long session makes more. */
export function keepResourceTimings(): void {
  if (typeof performance !== 'undefined' && typeof performance.setResourceTimingBufferSize === 'function') performance.setResourceTimingBufferSize(100_000);
}
