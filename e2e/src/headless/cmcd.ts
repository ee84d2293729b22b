/**
 * The CMCD headers of a headless request, as the browser player sends them: dash.js
 * (CMCD v1, `mode: 'headers'`, every key but `rtp`) writes its keys with the Common
 * Media Library's encoder, then the player's request step sets `rtp` in CMCD-Status
 * with `withRtp` (`@sammy/player/cmcd-status`), and the floor it declares with `withDeclaredFloor`. Here the same encoder writes the keys
 * dash.js writes for a segment request, and the same `withRtp` adds the rtp, so the
 * server reads the headless player's pace exactly as it reads the browser's.
 */
import { toCmcdHeaders, type Cmcd } from '@svta/cml-cmcd';
import { withDeclaredFloor, withRtp } from '@sammy/player/cmcd-status';

export interface CmcdRequest {
  /** CMCD sid: one per session (dash.js makes a UUID per player). */
  sessionId: string;
  /** `v` video, `a` audio, `i` init segment, `m` manifest, `o` other (sidecar). */
  objectType: 'v' | 'a' | 'i' | 'm' | 'o';
  bitrateKbps?: number;
  topBitrateKbps?: number;
  durationMs?: number;
  bufferMs?: number;
  measuredKbps?: number | null;
  /** The next object's path relative to this one (CMCD nor). */
  nextObject?: string;
  /** Before the first frame, or rebuffering (CMCD su). */
  startup: boolean;
  /** The buffer ran dry since the last request (CMCD bs). */
  starved: boolean;
  /** The pace the arm asks for; null sends no rtp. */
  rtpKbps: number | null;
  /** The floor the request declares to the spiral guard (CMCD `sammy-floor`); null or absent sends none. */
  declaredFloorKbps?: number | null;
}

/** CMCD rounds bl to 100 ms and mtp to 100 kbps (CTA-5004 4.1). */
const round100 = (v: number) => Math.round(v / 100) * 100;

export function cmcdHeaders(r: CmcdRequest): Record<string, string> {
  const data: Record<string, string | number | boolean> = { sid: r.sessionId, sf: 'd', st: 'v', ot: r.objectType };
  if (r.bitrateKbps !== undefined) data.br = Math.round(r.bitrateKbps);
  if (r.topBitrateKbps !== undefined) data.tb = Math.round(r.topBitrateKbps);
  if (r.durationMs !== undefined) data.d = Math.round(r.durationMs);
  if (r.bufferMs !== undefined) data.bl = round100(r.bufferMs);
  if (r.measuredKbps !== undefined && r.measuredKbps !== null && r.measuredKbps > 0) data.mtp = round100(r.measuredKbps);
  if (r.nextObject !== undefined) data.nor = r.nextObject;
  if (r.startup) data.su = true;
  if (r.starved) data.bs = true;
  // The v1 shape (scalar br, tb, bl, mtp, nor; the library types v2's lists), encoded as v1 as dash.js is configured to.
  return withDeclaredFloor(withRtp(toCmcdHeaders(data as unknown as Cmcd, { version: 1 }), r.rtpKbps), r.declaredFloorKbps ?? null);
}
