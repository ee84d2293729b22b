/**
 * dash.js 5 settings per arm (why each: docs/dashjs.md). Pure: the adapter passes the
 * result to `player.updateSettings()`.
 */
import { CMCD_KEYS, CmcdTransmissionMode } from '@svta/cml-cmcd';
import { ARM_REGISTRY, dashjsBufferTimesS, type Arm } from '../abr/arms/index.js';
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

export interface DashjsSettings {
  debug: { logLevel: number };
  streaming: {
    buffer: Record<string, number | boolean>;
    abr: Record<string, unknown>;
    cmcd: Record<string, unknown>;
  };
}

export function dashjsSettings(arm: Arm, config: PlayerConfig, initialBitrateKbps: number | null): DashjsSettings {
  const abr: Record<string, unknown> = {};
  if (ARM_REGISTRY[arm].bitrate === 'sammy') {
    abr.rules = Object.fromEntries(BUILT_IN_RULES.map((name) => [name, { active: false }]));
    // The first chunk's rung comes from the core (history or the no-history rule): dash.js
    // fetches the first segment before it consults any rule.
    if (initialBitrateKbps !== null) abr.initialBitrate = { video: initialBitrateKbps };
  }
  return {
    debug: { logLevel: 3 /* warnings and errors */ },
    streaming: {
      // The same buffer target for every arm. Fast switching would re-download buffered
      // segments at a higher rung, which neither the thesis's player nor our records model.
      buffer: { ...dashjsBufferTimesS(config.maxBufferS), fastSwitchEnabled: false },
      abr,
      cmcd: {
        enabled: true,
        mode: CMCD_MODE_HEADERS,
        version: 1,
        enabledKeys: playerCmcdKeys(arm, CMCD_KEYS),
        rtpSafetyFactor: config.dashjsRtpSafetyFactor,
      },
    },
  };
}
