/**
 * The CMCD `rtp` key in a request's `CMCD-Status` header (CTA-5004: requested maximum
 * throughput, integer kbps). dash.js writes its CMCD headers first; we then set or
 * remove `rtp` and leave every other member exactly as dash.js wrote it.
 *
 * Only the `rtp` member is edited, not re-encoded: `encodeCmcd` from @svta/cml-cmcd
 * rounds rtp to the *nearest* 100 kbps (3045 -> 3000, below the pace) and, by default,
 * appends `v=2` to whatever shard it encodes (both measured with 2.7.0). A
 * CMCD-Status dictionary holds only tokens, booleans, integers and inner lists, never
 * a quoted string, so its members split safely on commas.
 */
import { CMCD_V1_KEYS, decodeCmcd } from '@svta/cml-cmcd';
import { ARM_REGISTRY, type Arm } from '../abr/arms/index.js';
import { headerName, headerValue } from './headers.js';

export const CMCD_STATUS_HEADER = 'CMCD-Status';

/**
 * A copy of `headers` whose CMCD-Status carries `rtp=<rtpKbps>` (null: no rtp). The
 * header is dropped when nothing is left in it.
 */
export function withRtp(headers: Record<string, string> | undefined, rtpKbps: number | null): Record<string, string> {
  const out = { ...(headers ?? {}) };
  const name = headerName(out, CMCD_STATUS_HEADER) ?? CMCD_STATUS_HEADER;
  const members = (out[name] ?? '')
    .split(',')
    .map((m) => m.trim())
    .filter((m) => m !== '' && !/^rtp(=|;|$)/.test(m));
  if (rtpKbps !== null) {
    if (!Number.isInteger(rtpKbps) || rtpKbps <= 0) throw new RangeError(`rtp must be a positive integer kbps, got ${rtpKbps}`);
    members.push(`rtp=${rtpKbps}`);
  }
  delete out[name];
  if (members.length > 0) out[name] = members.join(',');
  return out;
}

/** The rtp a request carries in its CMCD-Status header, or null. */
export function rtpOf(headers: Record<string, string> | undefined): number | null {
  const value = headerValue(headers, CMCD_STATUS_HEADER);
  if (value === null) return null;
  const rtp = (decodeCmcd(value) as { rtp?: unknown }).rtp;
  return typeof rtp === 'number' && Number.isFinite(rtp) ? rtp : null;
}

/**
 * The CMCD keys a player sends for an arm: the given set (default CTA-5004's version 1
 * keys), without `rtp` unless the arm keeps the player's own (we write it ourselves, or
 * send none).
 */
export function playerCmcdKeys(arm: Arm, keys: readonly string[] = CMCD_V1_KEYS): string[] {
  return ARM_REGISTRY[arm].ownRtp ? [...keys] : keys.filter((k) => k !== 'rtp');
}
