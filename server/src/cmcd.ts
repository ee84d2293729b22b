// Reads the player's requested maximum throughput (CTA-5004 `rtp`) from a request,
// and what it says about its stream (`tb`, `br`, and the floor a player declares with
// `sammy-floor`) for the spiral guard.
// Decoding is @svta/cml-cmcd's (the library dash.js itself uses); this module only
// decides which payload counts and which values a server may trust.
import { CMCD_HEADER_FIELDS, CMCD_PARAM, decodeCmcd } from '@svta/cml-cmcd';
import type { IncomingHttpHeaders } from 'node:http';

/** The newest CMCD version this server understands (CTA-5004-B). */
export const CMCD_MAX_VERSION = 2;

/**
 * The custom CMCD key (CTA-5004 custom keys carry a hyphenated prefix) with which a
 * player declares the least rate its own bitrate rule needs to keep the top bitrate
 * (the Sammy player: its pace's Eq. 2.1 floor), kbps. The spiral guard then uses it
 * instead of a multiple of `tb` (docs/server-contract.md).
 */
export const DECLARED_FLOOR_KEY = 'sammy-floor';

/** What a request says about its stream (CTA-5004 `tb`, `br`, and `sammy-floor`), in kbps; null when absent or unusable. */
export interface StreamBitrates {
  /** `tb`: the highest bitrate the player may play now. */
  topBitrateKbps: number | null;
  /** `br`: the encoded bitrate of the requested object. */
  bitrateKbps: number | null;
  /** `sammy-floor`: the least rate the player declares its bitrate rule needs. */
  declaredFloorKbps: number | null;
}

export interface RateRequest extends StreamBitrates {
  /** Requested maximum throughput in kbps as sent (before clamping); null if none or unusable. */
  rtpKbps: number | null;
  /** Where the CMCD payload came from; null when the request carried none. */
  source: 'header' | 'query' | null;
  /** Why a CMCD payload or its rtp was ignored or needs a note (for the log); null if clean. */
  problem: string | null;
}

const NO_STREAM: StreamBitrates = { topBitrateKbps: null, bitrateKbps: null, declaredFloorKbps: null };
/** A request that carried no CMCD. */
export const NO_REQUEST: RateRequest = { rtpKbps: null, ...NO_STREAM, source: null, problem: null };

/**
 * A bitrate key's value in kbps: a positive number (CMCD v1), or the largest number of
 * an inner list (CMCD v2 lists one value per media type, e.g. `tb=(1050;v 64;a)`).
 * Anything else is unusable: null, with a note.
 */
function bitrateKbps(key: string, value: unknown): { kbps: number | null; problem: string | null } {
  if (value === undefined) return { kbps: null, problem: null };
  const items = Array.isArray(value) ? value : [value];
  const numbers = items.map((item: unknown) => (typeof item === 'object' && item !== null && 'value' in item ? (item as { value: unknown }).value : item));
  if (numbers.length > 0 && numbers.every((n) => typeof n === 'number' && Number.isFinite(n) && n > 0)) {
    return { kbps: Math.max(...(numbers as number[])), problem: null };
  }
  return { kbps: null, problem: `${key} ${JSON.stringify(value)} is not a positive bitrate (kbps): ignored` };
}

/** `tb`, `br` and `sammy-floor` of a decoded payload, and what was wrong with them. */
function streamBitrates(data: Record<string, unknown>): StreamBitrates & { problems: string[] } {
  const tb = bitrateKbps('tb', data['tb']);
  const br = bitrateKbps('br', data['br']);
  const floor = bitrateKbps(DECLARED_FLOOR_KEY, data[DECLARED_FLOOR_KEY]);
  return {
    topBitrateKbps: tb.kbps,
    bitrateKbps: br.kbps,
    declaredFloorKbps: floor.kbps,
    problems: [tb.problem, br.problem, floor.problem].filter((p): p is string => p !== null),
  };
}

/** Keys of a structured-field dictionary, in order, repeats kept (the decoder keeps only the last). */
function dictionaryKeys(text: string): string[] {
  return text.split(',').map((member) => member.trim().split(/[=;]/, 1)[0]!.trim());
}

function headerText(headers: IncomingHttpHeaders, field: string): string | undefined {
  const value = headers[field.toLowerCase()];
  // Node joins repeated unknown headers with ", ", which is also how RFC 8941 joins dictionary lines.
  return Array.isArray(value) ? value.join(', ') : value;
}

/** A payload that counts for nothing: no rate, nothing about the stream. */
function ignored(source: 'header' | 'query', problem: string): RateRequest {
  return { rtpKbps: null, ...NO_STREAM, source, problem };
}

function rateFrom(payloads: string[], source: 'header' | 'query', maxBytes: number): RateRequest {
  const totalBytes = payloads.reduce((sum, text) => sum + Buffer.byteLength(text), 0);
  if (totalBytes > maxBytes) return ignored(source, `CMCD ${source} of ${totalBytes} bytes exceeds ${maxBytes}: ignored`);
  const data: Record<string, unknown> = {};
  for (const text of payloads) {
    try {
      Object.assign(data, decodeCmcd(text));
    } catch {
      return ignored(source, `CMCD ${source} is not a structured-field dictionary: ignored`);
    }
  }
  const version = data['v'];
  if (version !== undefined && !(typeof version === 'number' && Number.isInteger(version) && version >= 1)) {
    return ignored(source, `CMCD version ${JSON.stringify(version)} is not a version number: ignored`);
  }
  if (typeof version === 'number' && version > CMCD_MAX_VERSION) {
    // CTA-5004 section 6: a payload of a version the receiver does not understand is ignored.
    return ignored(source, `CMCD version ${version} is newer than ${CMCD_MAX_VERSION}: ignored`);
  }
  const { problems, ...stream } = streamBitrates(data);
  const noted = (problem: string | null): string | null => [problem, ...problems].filter((p) => p !== null).join('; ') || null;
  const rtp = data['rtp'];
  if (rtp === undefined) return { rtpKbps: null, ...stream, source, problem: noted(null) };
  if (typeof rtp !== 'number' || !Number.isInteger(rtp) || rtp <= 0) {
    return { rtpKbps: null, ...stream, source, problem: noted(`rtp ${JSON.stringify(rtp)} is not a positive integer (kbps): ignored`) };
  }
  const rtpCount = payloads.flatMap(dictionaryKeys).filter((key) => key === 'rtp').length;
  // RFC 8941 section 4.2.2: the last of duplicated dictionary keys wins.
  const problem = rtpCount > 1 ? `rtp given ${rtpCount} times: the last value (${rtp}) is used` : null;
  return { rtpKbps: rtp, ...stream, source, problem: noted(problem) };
}

/**
 * The CMCD rate request of one HTTP request. Header form (`CMCD-Status: rtp=...`)
 * wins over query form (`?CMCD=...`) when both are present (CTA-5004: a client
 * must not send both). Never throws: hostile input becomes `rtpKbps: null` with a
 * `problem` to log.
 */
export function readRateRequest(headers: IncomingHttpHeaders, rawQuery: string, maxBytes: number): RateRequest {
  const headerPayloads = CMCD_HEADER_FIELDS.map((field) => headerText(headers, field)).filter(
    (text): text is string => text !== undefined && text.length > 0,
  );
  if (headerPayloads.length > 0) return rateFrom(headerPayloads, 'header', maxBytes);
  if (rawQuery.length === 0 || !rawQuery.includes(CMCD_PARAM)) return NO_REQUEST;
  const queryPayloads = new URLSearchParams(rawQuery).getAll(CMCD_PARAM);
  if (queryPayloads.length === 0) return NO_REQUEST;
  return rateFrom(queryPayloads, 'query', maxBytes);
}

/** The query string of a request URL (`?CMCD=...` is read from it), without the `?`. */
export function rawQueryOf(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? '' : url.slice(q + 1);
}

/** The rate actually applied: the request clamped to the server's [min, max] (kbps). */
export function clampRateKbps(rtpKbps: number, minRateKbps: number, maxRateKbps: number): number {
  return Math.min(maxRateKbps, Math.max(minRateKbps, rtpKbps));
}
