/**
 * What an experiment arm is, as one record: who picks the bitrate, what `rtp` the
 * player sends, how the simulator models it and where it runs. The registry
 * (`index.ts`) lists one record per arm; each record lives in its own file with its
 * policy.
 */
import type { SammySession } from '../session.js';

/**
 * Where an arm runs: `browser` the player page (`?arm=`), `headless` the page driven
 * by the lab and the loopback tests in headless Chromium, `simulator` `@sammy/sim`.
 */
export type ArmVenue = 'browser' | 'headless' | 'simulator';

/**
 * Who picks the bitrate: the Sammy core, the player's own default ABR (dash.js's rules,
 * Shaka's SimpleAbrManager, hls.js's AbrController), or the thesis 2.2.3 example rule.
 */
export type BitrateRule = 'sammy' | 'player' | 'thesis-2.2.3';

/** The web players the page drives (`?player=`), each through its own thin adapter. */
export const PLAYERS = ['dashjs', 'shaka', 'hlsjs'] as const;
export type PlayerName = (typeof PLAYERS)[number];

/**
 * The player computes and sends its own CMCD `rtp` (the adapter leaves the key on);
 * `safetyFactorParam` names the arm parameter that sets the player's `rtpSafetyFactor`.
 */
export interface OwnRtp {
  readonly safetyFactorParam: string;
}

/**
 * The simulator's model of the arm's player (`sim/src/arms/index.ts` maps each to a
 * class), and the fixed pace it adds, if any.
 */
export interface SimModel {
  model: 'sammy-core' | 'dashjs-default' | 'spiral';
  /** rtp = this multiple of the top bitrate on every request. */
  paceTopMultiplier?: number;
}

/** A numeric parameter an arm adds to the player config (`&config=`). */
export interface ArmParam {
  default: number;
  min: number;
  max: number;
}

/** What the player knows when it sets the `rtp` of one segment request. */
export interface RtpInput {
  /** The core's session; there for arms whose bitrate rule is `sammy`. */
  session: SammySession | null;
  /** Video buffer at the request. */
  bufferS: number;
  segmentIndex: number;
  /** Highest rung the player may choose now. */
  maxRung: number;
  /** The highest bitrate the player may choose now. */
  topKbps: () => number;
  /** One of the arm's own parameters (its `params`), as the player config sets it. */
  param: (name: string) => number;
}

/**
 * The request's rtp (null: none), the Eq. 2.1 floor it was computed with, and the floor
 * it declares to the server's spiral guard (CMCD `sammy-floor`; null: none, the guard
 * then floors at a multiple of `tb`); `keep`: leave the player's own.
 */
export type RtpChoice = { rtpKbps: number | null; floorKbps: number | null; declaredFloorKbps: number | null } | 'keep';

export interface ArmSpec {
  /** One line for READMEs, usage texts and reports. */
  readonly description: string;
  readonly bitrate: BitrateRule;
  /** null: the player's own CMCD `rtp` is switched off (the arm's `playerRtp` decides what is sent). */
  readonly ownRtp: OwnRtp | null;
  readonly runs: readonly ArmVenue[];
  /** The players the arm runs on in the browser (`?player=`); empty for simulator-only arms. */
  readonly players: readonly PlayerName[];
  /** null: the simulator does not model this arm. */
  readonly sim: SimModel | null;
  /** Parameters this arm adds to the player config, with defaults and accepted ranges. */
  readonly params: Readonly<Record<string, ArmParam>>;
  /** The player's rtp for a segment request; null for arms that do not run in the browser. */
  readonly playerRtp: ((input: RtpInput) => RtpChoice) | null;
}
