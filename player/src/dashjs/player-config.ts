/**
 * The player's whole parameter set: the Sammy core's (DEFAULT_SAMMY_CONFIG) plus what
 * the other arms need. `maxBufferS` is the buffer target of *every* arm (dash.js's
 * buffer settings are set from it), so arms are compared at the same target.
 */
import { CMCD_KEYS } from '@svta/cml-cmcd';
import { checkSammyField, DEFAULT_SAMMY_CONFIG, isSammyConfigKey, SammyConfigError, type SammyConfig } from '../abr/config.js';
import { ARMS, type Arm } from '../abr/records.js';

export interface PlayerConfig extends SammyConfig {
  /** `fixed4x`: rtp = this multiple of the top bitrate on every chunk (thesis 2.5.4: 4). */
  fixedRtpMultiplier: number;
  /** `dashjs-rtp`: dash.js's own `rtpSafetyFactor` (its default, 5). */
  dashjsRtpSafetyFactor: number;
}

export const DEFAULT_PLAYER_CONFIG: Readonly<PlayerConfig> = Object.freeze({
  ...DEFAULT_SAMMY_CONFIG,
  fixedRtpMultiplier: 4,
  dashjsRtpSafetyFactor: 5,
});

const PLAYER_ONLY: Record<Exclude<keyof PlayerConfig, keyof SammyConfig>, { min: number; max: number }> = {
  fixedRtpMultiplier: { min: 0.01, max: 1000 },
  dashjsRtpSafetyFactor: { min: 0.01, max: 1000 },
};

/** Defaults overridden field by field (the page's `&config=`); unknown fields and bad values throw. */
export function resolvePlayerConfig(overrides: unknown = {}): PlayerConfig {
  if (typeof overrides !== 'object' || overrides === null || Array.isArray(overrides)) {
    throw new SammyConfigError(`config must be a JSON object, got ${JSON.stringify(overrides)}`);
  }
  const config: PlayerConfig = { ...DEFAULT_PLAYER_CONFIG };
  for (const [key, value] of Object.entries(overrides)) {
    if (isSammyConfigKey(key)) {
      config[key] = checkSammyField(key, value);
    } else if (key in PLAYER_ONLY) {
      const r = PLAYER_ONLY[key as keyof typeof PLAYER_ONLY];
      if (typeof value !== 'number' || !Number.isFinite(value) || value < r.min || value > r.max) {
        throw new SammyConfigError(`invalid ${key}: ${JSON.stringify(value)} (accepted: a number in [${r.min}, ${r.max}])`);
      }
      config[key as keyof typeof PLAYER_ONLY] = value;
    } else {
      throw new SammyConfigError(`unknown player parameter ${JSON.stringify(key)} (known: ${Object.keys(DEFAULT_PLAYER_CONFIG).join(', ')})`);
    }
  }
  return config;
}

export function parseArm(value: string | null): Arm {
  if (value === null || value === '') return 'sammy';
  if ((ARMS as readonly string[]).includes(value)) return value as Arm;
  throw new SammyConfigError(`unknown arm ${JSON.stringify(value)} (known: ${ARMS.join(', ')})`);
}

/** dash.js's CMCD keys: all of them, except `rtp` when we write it ourselves or send none. */
export function cmcdKeysFor(arm: Arm): string[] {
  return arm === 'dashjs-rtp' ? [...CMCD_KEYS] : CMCD_KEYS.filter((k) => k !== 'rtp');
}
