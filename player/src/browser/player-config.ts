/**
 * The player's whole parameter set: the Sammy core's (DEFAULT_SAMMY_CONFIG) plus what
 * the other arms need. `maxBufferS` is the buffer target of *every* arm (dash.js's
 * buffer settings are set from it), so arms are compared at the same target.
 */
import { ARM_PARAMS, armsFor, PLAYERS, type Arm, type ArmParams, type PlayerName } from '../abr/arms/index.js';
import { checkSammyField, DEFAULT_SAMMY_CONFIG, isSammyConfigKey, SammyConfigError, type SammyConfig } from '../abr/config.js';

/** The core's parameters plus each arm's own (`src/abr/arms/`: e.g. `fixed4x`'s `fixedRtpMultiplier`). */
export interface PlayerConfig extends SammyConfig, ArmParams {}

export const DEFAULT_PLAYER_CONFIG: Readonly<PlayerConfig> = Object.freeze({
  ...DEFAULT_SAMMY_CONFIG,
  ...(Object.fromEntries(Object.entries(ARM_PARAMS).map(([key, p]) => [key, p.default])) as ArmParams),
});

/** Defaults overridden field by field (the page's `&config=`); unknown fields and bad values throw. */
export function resolvePlayerConfig(overrides: unknown = {}): PlayerConfig {
  if (typeof overrides !== 'object' || overrides === null || Array.isArray(overrides)) {
    throw new SammyConfigError(`config must be a JSON object, got ${JSON.stringify(overrides)}`);
  }
  const config: PlayerConfig = { ...DEFAULT_PLAYER_CONFIG };
  for (const [key, value] of Object.entries(overrides)) {
    if (isSammyConfigKey(key)) {
      config[key] = checkSammyField(key, value);
    } else if (Object.prototype.hasOwnProperty.call(ARM_PARAMS, key)) {
      const r = ARM_PARAMS[key]!;
      if (typeof value !== 'number' || !Number.isFinite(value) || value < r.min || value > r.max) {
        throw new SammyConfigError(`invalid ${key}: ${JSON.stringify(value)} (accepted: a number in [${r.min}, ${r.max}])`);
      }
      (config as unknown as Record<string, number>)[key] = value;
    } else {
      throw new SammyConfigError(`unknown player parameter ${JSON.stringify(key)} (known: ${Object.keys(DEFAULT_PLAYER_CONFIG).join(', ')})`);
    }
  }
  return config;
}

/** An arm's parameter from the config; throws a coded error for a name no arm declares. */
export function armParam(config: PlayerConfig, name: string): number {
  if (!Object.prototype.hasOwnProperty.call(ARM_PARAMS, name)) {
    throw new SammyConfigError(`unknown arm parameter ${JSON.stringify(name)} (known: ${Object.keys(ARM_PARAMS).join(', ')})`);
  }
  return (config as unknown as Record<string, number>)[name]!;
}

/** The page's `?player=` (default dash.js). */
export function parsePlayer(value: string | null): PlayerName {
  if (value === null || value === '') return 'dashjs';
  if ((PLAYERS as readonly string[]).includes(value)) return value as PlayerName;
  throw new SammyConfigError(`unknown player ${JSON.stringify(value)} (known: ${PLAYERS.join(', ')})`);
}

/** An arm (default sammy) that runs in the browser on `player` (the page's `?arm=`, a plugin's `arm` option). */
export function parseArm(value: string | null, player: PlayerName = 'dashjs'): Arm {
  if (value === null || value === '') return 'sammy';
  const arms = armsFor(player);
  if ((arms as readonly string[]).includes(value)) return value as Arm;
  throw new SammyConfigError(`unknown arm ${JSON.stringify(value)} for player ${player} (known: ${arms.join(', ')})`);
}
