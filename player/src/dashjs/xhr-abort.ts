/**
 * Aborting the requests dash.js 5.2.1 gives up.
 *
 * When an abandonment rule answers (dash.js's AbandonRequestsRule in the `control` and
 * `fixed4x` arms, the stalled-download rule in Sammy's), dash.js switches the quality,
 * aborts the video requests in flight (`FragmentModel.abortRequests()`, which calls each
 * request's `customData.abort()`) and fetches the segment again at the new rung. Seeks
 * and track switches abort the same way. With CMCD on, that abort reaches nothing: CMCD's
 * request interceptor hands the loader a copy of the request with a copy of its
 * `customData`, the XHRLoader puts the abort on the copy, and the abort loop walks the
 * originals. So the given-up video chunk downloaded to its end beside its refetch (both
 * in the server's log, in full; both became chunk records), on slow links doubling the
 * video's traffic just when the link had least.
 *
 * Two overrides (installed with `player.extend()` for every arm: they fix the loader and
 * change no ABR decision) restore what dash.js means to do:
 * - the XHRLoader's `load` records each XMLHttpRequest by media type while it is in
 *   flight, and gives the request it was handed an abort of that XMLHttpRequest (not of
 *   whichever the loader sent last, as its own abort does);
 * - `FragmentModel.abortRequests()` runs dash.js's own, then aborts what is still in
 *   flight of its media type.
 * An abort does what dash.js's own does: end, error and progress callbacks off, the
 * abort callback left, so dash.js sees an abandoned load.
 */

/** The parts of dash.js's XHRLoader and its requests the override uses. */
interface XhrLoader {
  load(request: { customData?: { abort?: () => void; request?: { mediaType?: string } } }, response: unknown): unknown;
  getXhr(): XMLHttpRequest | null;
}

/** The parts of dash.js's FragmentModel the override uses. */
interface FragmentModel {
  abortRequests(): void;
  getType(): string;
}

/** Aborts `xhr` without its end, error and progress callbacks, as dash.js's own abort does. */
export function abortQuietly(xhr: XMLHttpRequest): void {
  xhr.onloadend = xhr.onerror = xhr.onprogress = xhr.onload = null;
  xhr.abort();
  xhr.onabort = xhr.ontimeout = null;
}

/** The XMLHttpRequests in flight, by media type, as the XHRLoader override reports them. */
export class XhrsInFlight {
  readonly #byType = new Map<string, Set<XMLHttpRequest>>();

  sent(mediaType: string, xhr: XMLHttpRequest): void {
    let set = this.#byType.get(mediaType);
    if (!set) this.#byType.set(mediaType, (set = new Set()));
    set.add(xhr);
    xhr.addEventListener('loadend', () => set.delete(xhr));
  }

  /** Aborts every request of `mediaType` still in flight; returns how many. */
  abortAll(mediaType: string): number {
    const set = this.#byType.get(mediaType);
    if (!set) return 0;
    const xhrs = [...set].filter((x) => x.readyState !== XMLHttpRequest.DONE && x.readyState !== XMLHttpRequest.UNSENT);
    set.clear();
    for (const xhr of xhrs) abortQuietly(xhr);
    return xhrs.length;
  }
}

/** The child for `player.extend('XHRLoader', child, true)`. */
export function recordingXhrLoader(inFlight: XhrsInFlight): (this: { parent: XhrLoader }) => Pick<XhrLoader, 'load'> {
  return function (this: { parent: XhrLoader }) {
    const parent = this.parent;
    // FactoryMaker puts the returned `load` on the parent itself once this returns: keep its own.
    const parentLoad = parent.load.bind(parent);
    return {
      load(request, response) {
        const sent = parentLoad(request, response);
        // The parent's load made this request's XMLHttpRequest and bound its abort to the loader's field.
        const xhr = parent.getXhr();
        if (xhr && request.customData) {
          request.customData.abort = () => abortQuietly(xhr);
          const type = request.customData.request?.mediaType;
          if (type) inFlight.sent(type, xhr);
        }
        return sent;
      },
    };
  };
}

/** The child for `player.extend('FragmentModel', child, true)`. */
export function abortingFragmentModel(inFlight: XhrsInFlight): (this: { parent: FragmentModel }) => Pick<FragmentModel, 'abortRequests'> {
  return function (this: { parent: FragmentModel }) {
    const parent = this.parent;
    const parentAbort = parent.abortRequests.bind(parent);
    return {
      abortRequests() {
        parentAbort();
        inFlight.abortAll(parent.getType());
      },
    };
  };
}

export const XHR_LOADER_NAME = 'XHRLoader';
export const FRAGMENT_MODEL_NAME = 'FragmentModel';
