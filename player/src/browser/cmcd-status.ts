/**
 * Integer members of a request's CMCD headers: `rtp` in `CMCD-Status` (CTA-5004:
 * requested maximum throughput, integer kbps), beside it the custom key `sammy-floor`
 * (the least rate Sammy's bitrate rule needs, kbps: the server's spiral guard takes it
 * instead of a multiple of `tb`), and `tb` in `CMCD-Object` (top bitrate, kbps). The player (dash.js, or whichever writes CMCD first) writes its headers; we
 * then set or remove one member and leave every other member exactly as written.
 *
 * Only that member is edited, not the header re-encoded: `encodeCmcd` from
 * @svta/cml-cmcd rounds rtp to the *nearest* 100 kbps (3045 -> 3000, below the pace)
 * and, by default, appends `v=2` to whatever shard it encodes (both measured with
 * 2.7.0). A CMCD dictionary of these headers holds only tokens, booleans, integers
 * and inner lists, never a quoted string with a comma, so its members split safely
 * on commas.
 */
import { CMCD_V1_KEYS, decodeCmcd } from '@svta/cml-cmcd';
import { ARM_REGISTRY, type Arm } from '../abr/arms/index.js';
import { headerName, headerValue } from './headers.js';

export const CMCD_STATUS_HEADER = 'CMCD-Status';
export const CMCD_OBJECT_HEADER = 'CMCD-Object';
/** The four CMCD request headers (CTA-5004). */
export const CMCD_HEADERS = ['CMCD-Object', 'CMCD-Request', 'CMCD-Session', CMCD_STATUS_HEADER] as const;
/** The custom CMCD key (CTA-5004: a hyphenated prefix) of the floor a request declares (docs/server-contract.md). */
export const DECLARED_FLOOR_KEY = 'sammy-floor';

/**
 * A copy of `headers` whose `header` carries `key=<value>` (null: no such member). The
 * header is dropped when nothing is left in it.
 */
function withIntegerMember(headers: Record<string, string> | undefined, header: string, key: string, value: number | null): Record<string, string> {
  const out = { ...(headers ?? {}) };
  const name = headerName(out, header) ?? header;
  const keyPattern = new RegExp(`^${key}(=|;|$)`);
  const members = (out[name] ?? '')
    .split(',')
    .map((m) => m.trim())
    .filter((m) => m !== '' && !keyPattern.test(m));
  if (value !== null) {
    if (!Number.isInteger(value) || value <= 0) throw new RangeError(`${key} must be a positive integer kbps, got ${value}`);
    members.push(`${key}=${value}`);
  }
  delete out[name];
  if (members.length > 0) out[name] = members.join(',');
  return out;
}

/** `headers` with `rtp=<rtpKbps>` in CMCD-Status (null: no rtp). */
export function withRtp(headers: Record<string, string> | undefined, rtpKbps: number | null): Record<string, string> {
  return withIntegerMember(headers, CMCD_STATUS_HEADER, 'rtp', rtpKbps);
}

/**
 * `headers` with `sammy-floor=<floorKbps>` in CMCD-Status (null: none): the least rate
 * the player's own bitrate rule needs to keep the top bitrate (Sammy's Eq. 2.1 floor,
 * never above the rtp it travels with). A server's spiral guard raises an rtp to this
 * floor instead of to a multiple of `tb`, so it never undoes a pace Sammy chose
 * below 2.5x the top (docs/server-contract.md).
 */
export function withDeclaredFloor(headers: Record<string, string> | undefined, floorKbps: number | null): Record<string, string> {
  return withIntegerMember(headers, CMCD_STATUS_HEADER, DECLARED_FLOOR_KEY, floorKbps);
}

/**
 * `headers` with `tb=<topKbps>` in CMCD-Object: the top bitrate an rtp was computed
 * from travels with it, so a server's spiral guard (which floors the pace at a
 * multiple of `tb`) measures the rtp against the same top (docs/server-contract.md).
 */
export function withTb(headers: Record<string, string> | undefined, topKbps: number): Record<string, string> {
  return withIntegerMember(headers, CMCD_OBJECT_HEADER, 'tb', topKbps);
}

function integerMember(headers: Record<string, string> | undefined, header: string, key: string): number | null {
  const value = headerValue(headers, header);
  if (value === null) return null;
  const member = (decodeCmcd(value) as Record<string, unknown>)[key];
  return typeof member === 'number' && Number.isFinite(member) ? member : null;
}

/** The rtp a request carries in its CMCD-Status header, or null. */
export function rtpOf(headers: Record<string, string> | undefined): number | null {
  return integerMember(headers, CMCD_STATUS_HEADER, 'rtp');
}

/** The sammy-floor a request carries in its CMCD-Status header, or null. */
export function declaredFloorOf(headers: Record<string, string> | undefined): number | null {
  return integerMember(headers, CMCD_STATUS_HEADER, DECLARED_FLOOR_KEY);
}

/** The br (encoded bitrate of the object, kbps) a request carries in its CMCD-Object header, or null. */
export function brOf(headers: Record<string, string> | undefined): number | null {
  return integerMember(headers, CMCD_OBJECT_HEADER, 'br');
}

/** The tb a request carries in its CMCD-Object header, or null. */
export function tbOf(headers: Record<string, string> | undefined): number | null {
  return integerMember(headers, CMCD_OBJECT_HEADER, 'tb');
}

/**
 * The CMCD keys a player sends for an arm: the given set (default CTA-5004's version 1
 * keys), without `rtp` unless the arm keeps the player's own (we write it ourselves, or
 * send none).
 */
export function playerCmcdKeys(arm: Arm, keys: readonly string[] = CMCD_V1_KEYS): string[] {
  return ARM_REGISTRY[arm].ownRtp ? [...keys] : keys.filter((k) => k !== 'rtp');
}
