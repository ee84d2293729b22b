/**
 * A chunk's network time from the Resource Timing API: request sent to last byte. A
 * player's own timing (dash.js: from before `xhr.send()` to the `loadend` event) is
 * delayed by a busy main thread (on loopback at startup it tripled a chunk's time).
 */

/** Seconds from request to last byte of the latest fetch of `url`; null when the browser has no entry. */
export function resourceTimingS(url: string): number | null {
  if (typeof performance === 'undefined' || typeof performance.getEntriesByName !== 'function' || typeof location === 'undefined') return null;
  const entries = performance.getEntriesByName(new URL(url, location.href).href, 'resource') as PerformanceResourceTiming[];
  const e = entries.at(-1);
  if (!e || e.responseEnd <= 0) return null;
  const start = e.requestStart > 0 ? e.requestStart : e.startTime;
  const ms = e.responseEnd - start;
  return ms > 0 ? ms / 1000 : null;
}

/** Resource Timing keeps 250 entries by default; a long session makes more. */
export function keepResourceTimings(): void {
  if (typeof performance !== 'undefined' && typeof performance.setResourceTimingBufferSize === 'function') performance.setResourceTimingBufferSize(100_000);
}
