/**
 * dash.js 5 settings per arm (why each: docs/dashjs.md). Pure: the adapter passes the
 * results to `player.updateSettings()`, and gives the player its own values back on
 * detach (`restorePatch`).
 */
import { CMCD_KEYS, CmcdTransmissionMode } from '@svta/cml-cmcd';
import { dashjsBufferTimesS, type Arm } from '../abr/arms/index.js';
import { playerCmcdKeys } from '../browser/cmcd-status.js';
import type { PlayerConfig } from '../browser/player-config.js';

/**
 * CMCD header mode. dash.js 5.2.1 compares `streaming.cmcd.mode` with
 * `CmcdTransmissionMode.HEADERS`, which is `'headers'` (plural); its typings offer
 * `'header'`, which matches nothing and silently sends CMCD in the query.
 */
export const CMCD_MODE_HEADERS = CmcdTransmissionMode.HEADERS;

/** dash.js's quality-switch rules, all off for the arms whose bitrate is Sammy's, so ours alone decides. */
export const BUILT_IN_RULES = [
  'throughputRule',
  'bolaRule',
  'insufficientBufferRule',
  'switchHistoryRule',
  'droppedFramesRule',
  'abandonRequestsRule',
  'l2ARule',
  'loLPRule',
] as const;

/** dash.js's CMCD keys: all of them, except `rtp` when we write it ourselves or send none. */
export function cmcdKeysFor(arm: Arm): string[] {
  return playerCmcdKeys(arm, CMCD_KEYS);
}

/** A partial dash.js settings object, as `updateSettings()` takes it. */
export type SettingsPatch = Record<string, unknown>;

export interface DashjsSettings {
  streaming: {
    buffer: Record<string, number | boolean>;
    cmcd: { enabled: boolean; mode: string; version: number; enabledKeys: string[]; rtpSafetyFactor: number };
  };
}

export interface SammyAbrSettings {
  streaming: { abandonLoadTimeout: number; abr: { rules: Record<string, { active: boolean }>; initialBitrate: { video: number } } };
}

/** Every arm, from the attach on: CMCD in headers (the arm's keys), the buffer target. */
export function dashjsSettings(arm: Arm, config: PlayerConfig): DashjsSettings {
  return {
    streaming: {
      // The same buffer target for every arm. Fast switching would re-download buffered
      // segments at a higher rung, which neither the thesis's player nor our records model.
      buffer: { ...dashjsBufferTimesS(config.maxBufferS), fastSwitchEnabled: false },
      cmcd: {
        enabled: true,
        mode: CMCD_MODE_HEADERS,
        version: 1,
        enabledKeys: cmcdKeysFor(arm),
        rtpSafetyFactor: config.dashjsRtpSafetyFactor,
      },
    },
  };
}

/**
 * The arms whose bitrate is Sammy's, once the core runs: every built-in quality rule
 * off, the first chunk at the core's rung (history or the no-history rule), since
 * dash.js fetches the first segment before it consults any rule, and no up-switch ban
 * after an abandonment: dash.js lets only down-switches through for
 * `abandonLoadTimeout` after any abandoned request, which after the core's
 * stalled-download rule held its up-switches for 10 s (docs/dashjs.md).
 */
export function sammyAbrSettings(initialBitrateKbps: number): SammyAbrSettings {
  return {
    streaming: {
      abandonLoadTimeout: 0,
      abr: {
        rules: Object.fromEntries(BUILT_IN_RULES.map((name) => [name, { active: false }])),
        initialBitrate: { video: initialBitrateKbps },
      },
    },
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The player's current values at every leaf of `patch`: applied after `patch`, they
 * give the player back what it had (arrays and plain values are leaves; copied, since
 * dash.js hands out its live settings object).
 */
export function restorePatch(patch: object, current: unknown): SettingsPatch {
  const out: SettingsPatch = {};
  for (const [key, value] of Object.entries(patch)) {
    const now = isObject(current) ? current[key] : undefined;
    if (isObject(value)) out[key] = restorePatch(value, now);
    else if (now !== undefined) out[key] = JSON.parse(JSON.stringify(now)) as unknown;
  }
  return out;
}

/** Two patches as one (the second wins where both set a leaf). */
export function mergePatches(a: object, b: object): SettingsPatch {
  const out: SettingsPatch = { ...a };
  for (const [key, value] of Object.entries(b)) {
    const prev = out[key];
    out[key] = isObject(prev) && isObject(value) ? mergePatches(prev, value) : value;
  }
  return out;
}
