/**
 * The experiment arms, one entry each. Adding an arm: a file beside this one with its
 * `ArmSpec` (description, bitrate rule, rtp policy, simulator model, where it runs, on
 * which players, its parameters) and one line in {@link ARM_REGISTRY}. The player
 * adapters (`src/dashjs/`, `src/shaka/`, `src/hlsjs/`), the simulator (`sim/src/arms/`),
 * the lab's scenario check and the page's arm selector all read this table.
 */
import { CONTROL_ARM } from './control.js';
import { FIXED4X_ARM } from './fixed4x.js';
import { DASHJS_RTP_ARM, HLSJS_RTP_ARM, SHAKA_RTP_ARM } from './own-rtp.js';
import { SAMMY_ARM } from './sammy.js';
import type { ArmParam, ArmSpec, ArmVenue, PlayerName } from './spec.js';
import { SPIRAL_ARM } from './spiral.js';

export const ARM_REGISTRY = {
  sammy: SAMMY_ARM,
  control: CONTROL_ARM,
  fixed4x: FIXED4X_ARM,
  'dashjs-rtp': DASHJS_RTP_ARM,
  'shaka-rtp': SHAKA_RTP_ARM,
  'hlsjs-rtp': HLSJS_RTP_ARM,
  spiral: SPIRAL_ARM,
} as const satisfies Record<string, ArmSpec>;

export type ArmName = keyof typeof ARM_REGISTRY;

/** The names of the arms that run in `venue`. */
export type ArmIn<V extends ArmVenue> = { [K in ArmName]: V extends (typeof ARM_REGISTRY)[K]['runs'][number] ? K : never }[ArmName];

/** The player's arms (the page's `?arm=`, `SessionQoE.arm`): who picks the bitrate and what `rtp` is sent. */
export type Arm = ArmIn<'browser'>;

const NAMES = Object.keys(ARM_REGISTRY) as ArmName[];

/** The arms that run in `venue`, in registry order. */
export function armsIn<V extends ArmVenue>(venue: V): readonly ArmIn<V>[] {
  return Object.freeze(NAMES.filter((name) => (ARM_REGISTRY[name].runs as readonly ArmVenue[]).includes(venue)) as ArmIn<V>[]);
}

export const ARMS: readonly Arm[] = armsIn('browser');

/** The arms that run in `venue` on `player`, in registry order (the page's arm selector, `?arm=`). */
export function armsFor(player: PlayerName, venue: ArmVenue = 'browser'): readonly Arm[] {
  return armsIn(venue).filter((name) => (ARM_REGISTRY[name].players as readonly PlayerName[]).includes(player)) as Arm[];
}

export function isArmName(name: string): name is ArmName {
  return Object.prototype.hasOwnProperty.call(ARM_REGISTRY, name);
}

export function armSpec(name: ArmName): ArmSpec {
  return ARM_REGISTRY[name];
}

/** Every arm's player-config parameters by name (they share one namespace with the core's). */
export const ARM_PARAMS: Readonly<Record<string, ArmParam>> = Object.freeze(Object.assign({}, ...NAMES.map((name) => ARM_REGISTRY[name].params)));

type UnionToIntersection<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void ? I : never;

/** The arms' parameters as config fields (e.g. `fixedRtpMultiplier`). */
export type ArmParams = UnionToIntersection<{ [K in ArmName]: { -readonly [P in keyof (typeof ARM_REGISTRY)[K]['params']]: number } }[ArmName]>;

export { dashjsBufferTimesS, type DashjsBufferTimesS } from './buffer-target.js';
export { fixedRtpKbps, FIXED_RTP_TOP_MULTIPLIER } from './fixed4x.js';
export { SPIRAL_RULE, spiralRung, type SpiralRule } from './spiral.js';
export { PLAYERS, type ArmParam, type ArmSpec, type ArmVenue, type BitrateRule, type OwnRtp, type PlayerName, type RtpChoice, type RtpInput, type SimModel } from './spec.js';
