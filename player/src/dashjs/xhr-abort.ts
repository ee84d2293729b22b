/**
 * Aborting the video request the stalled-download rule gives up, in dash.js 5.2.1.
 *
 * When an abandonment rule answers, dash.js switches the quality and fetches the
 * segment again at the new rung, but the request given up is not aborted: in our
 * Chromium runs it downloaded to its end beside its refetch (both in the server's log,
 * in full) while the audio request sent after it was cut. dash.js's XHRLoader keeps one
 * XMLHttpRequest field for all its requests, and its aborts reach only the last one sent.
 * So the adapter aborts the request itself: an override of the XHRLoader (installed
 * with `player.extend()`, for the arms whose bitrate is Sammy's) reports each
 * XMLHttpRequest it sends with its URL, and the adapter aborts the one the rule gave up,
 * as dash.js's own abort does (its end, error and progress callbacks taken off first,
 * its abort callback left, so dash.js sees an abandoned load).
 */

/** The parts of dash.js's XHRLoader the override uses. */
interface XhrLoader {
  load(request: { url?: string }, response: unknown): unknown;
  getXhr(): XMLHttpRequest | null;
}

/** Aborts `xhr` without its end, error and progress callbacks, as dash.js's own abort does. */
export function abortQuietly(xhr: XMLHttpRequest): void {
  xhr.onloadend = xhr.onerror = xhr.onprogress = xhr.onload = null;
  xhr.abort();
  xhr.onabort = xhr.ontimeout = null;
}

/** The XMLHttpRequests in flight, by URL, as the override reports them. */
export class XhrsInFlight {
  readonly #byUrl = new Map<string, XMLHttpRequest>();

  sent(url: string, xhr: XMLHttpRequest): void {
    this.#byUrl.set(url, xhr);
    xhr.addEventListener('loadend', () => {
      if (this.#byUrl.get(url) === xhr) this.#byUrl.delete(url);
    });
  }

  /** Aborts the request in flight for `url`; false if there is none. */
  abort(url: string): boolean {
    const xhr = this.#byUrl.get(url);
    if (!xhr) return false;
    this.#byUrl.delete(url);
    abortQuietly(xhr);
    return true;
  }
}

/** The child for `player.extend('XHRLoader', child, true)`, reporting every request it sends to `inFlight`. */
export function reportingXhrLoader(inFlight: XhrsInFlight): (this: { parent: XhrLoader }) => Pick<XhrLoader, 'load'> {
  return function (this: { parent: XhrLoader }) {
    const parent = this.parent;
    // FactoryMaker puts the returned `load` on the parent itself once this returns: keep its own.
    const parentLoad = parent.load.bind(parent);
    return {
      load(request, response) {
        const sent = parentLoad(request, response);
        const xhr = parent.getXhr();
        if (xhr && request.url) inFlight.sent(request.url, xhr);
        return sent;
      },
    };
  };
}

export const XHR_LOADER_NAME = 'XHRLoader';
