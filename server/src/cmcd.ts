// Reads the player's requested maximum throughput (CTA-5004 `rtp`) from a request.
// Decoding is @svta/cml-cmcd's (the library dash.js itself uses); this module only
// decides which payload counts and which values a server may trust.
import { CMCD_HEADER_FIELDS, CMCD_PARAM, decodeCmcd } from '@svta/cml-cmcd';
import type { IncomingHttpHeaders } from 'node:http';

/** The newest CMCD version this server understands (CTA-5004-B). */
export const CMCD_MAX_VERSION = 2;

export interface RateRequest {
  /** Requested maximum throughput in kbps as sent (before clamping); null if none or unusable. */
  rtpKbps: number | null;
  /** Where the CMCD payload came from; null when the request carried none. */
  source: 'header' | 'query' | null;
  /** Why a CMCD payload or its rtp was ignored or needs a note (for the log); null if clean. */
  problem: string | null;
}

const NO_REQUEST: RateRequest = { rtpKbps: null, source: null, problem: null };

/** Keys of a structured-field dictionary, in order, repeats kept (the decoder keeps only the last). */
function dictionaryKeys(text: string): string[] {
  return text.split(',').map((member) => member.trim().split(/[=;]/, 1)[0]!.trim());
}

function headerText(headers: IncomingHttpHeaders, field: string): string | undefined {
  const value = headers[field.toLowerCase()];
  // Node joins repeated unknown headers with ", ", which is also how RFC 8941 joins dictionary lines.
  return Array.isArray(value) ? value.join(', ') : value;
}

function rateFrom(payloads: string[], source: 'header' | 'query', maxBytes: number): RateRequest {
  const totalBytes = payloads.reduce((sum, text) => sum + Buffer.byteLength(text), 0);
  if (totalBytes > maxBytes) {
    return { rtpKbps: null, source, problem: `CMCD ${source} of ${totalBytes} bytes exceeds ${maxBytes}: ignored` };
  }
  const data: Record<string, unknown> = {};
  for (const text of payloads) {
    try {
      Object.assign(data, decodeCmcd(text));
    } catch {
      return { rtpKbps: null, source, problem: `CMCD ${source} is not a structured-field dictionary: ignored` };
    }
  }
  const version = data['v'];
  if (version !== undefined && !(typeof version === 'number' && Number.isInteger(version) && version >= 1)) {
    return { rtpKbps: null, source, problem: `CMCD version ${JSON.stringify(version)} is not a version number: ignored` };
  }
  if (typeof version === 'number' && version > CMCD_MAX_VERSION) {
    // CTA-5004 section 6: a payload of a version the receiver does not understand is ignored.
    return { rtpKbps: null, source, problem: `CMCD version ${version} is newer than ${CMCD_MAX_VERSION}: ignored` };
  }
  const rtp = data['rtp'];
  if (rtp === undefined) return { rtpKbps: null, source, problem: null };
  if (typeof rtp !== 'number' || !Number.isInteger(rtp) || rtp <= 0) {
    return { rtpKbps: null, source, problem: `rtp ${JSON.stringify(rtp)} is not a positive integer (kbps): ignored` };
  }
  const rtpCount = payloads.flatMap(dictionaryKeys).filter((key) => key === 'rtp').length;
  // RFC 8941 section 4.2.2: the last of duplicated dictionary keys wins.
  const problem = rtpCount > 1 ? `rtp given ${rtpCount} times: the last value (${rtp}) is used` : null;
  return { rtpKbps: rtp, source, problem };
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

/** The rate actually applied: the request clamped to the server's [min, max] (kbps). */
export function clampRateKbps(rtpKbps: number, minRateKbps: number, maxRateKbps: number): number {
  return Math.min(maxRateKbps, Math.max(minRateKbps, rtpKbps));
}
