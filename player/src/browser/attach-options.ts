/**
 * The options of a plugin's attach call, checked before the player is touched and
 * defaulted: a bad one throws a `SammyConfigError` naming it, its value and what is
 * accepted.
 */
import type { Arm, PlayerName } from '../abr/arms/index.js';
import { SammyConfigError } from '../abr/config.js';
import type { InitialThroughputHistory } from '../abr/history.js';
import type { ChunkRecord } from '../abr/records.js';
import { openHistory } from './history-store.js';
import type { SammyOptions, SegmentsOption } from './options.js';
import { parseArm, resolvePlayerConfig, type PlayerConfig } from './player-config.js';
import { checkSegmentsOption } from './segments.js';

/** The options checked and defaulted. */
export interface AttachOptions {
  arm: Arm;
  config: PlayerConfig;
  segments: SegmentsOption | undefined;
  history: InitialThroughputHistory;
  onChunk: (record: ChunkRecord) => void;
  log: (message: string, err?: unknown) => void;
}

function optionalFunction<T>(name: string, value: unknown): T | undefined {
  if (value === undefined || typeof value === 'function') return value as T | undefined;
  throw new SammyConfigError(`invalid ${name}: ${JSON.stringify(value)} (accepted: a function)`);
}

const KNOWN_OPTIONS = ['config', 'segments', 'history', 'arm', 'onChunk', 'log'];

/** Checks every option before the player is touched; a bad one throws a `SammyConfigError` naming it (an arm must run on `player`). */
export function resolveAttachOptions(options: SammyOptions = {}, player: PlayerName): AttachOptions {
  if (typeof options !== 'object' || options === null) throw new SammyConfigError(`options must be an object, got ${JSON.stringify(options)}`);
  const unknown = Object.keys(options).filter((k) => !KNOWN_OPTIONS.includes(k));
  if (unknown.length > 0) throw new SammyConfigError(`unknown option ${JSON.stringify(unknown[0])} (known: ${KNOWN_OPTIONS.join(', ')})`);
  const config = resolvePlayerConfig(options.config ?? {});
  return {
    arm: options.arm === undefined ? 'sammy' : parseArm(options.arm, player),
    config,
    segments: checkSegmentsOption(options.segments),
    history: openHistory(options.history, config.historySize),
    onChunk: optionalFunction<AttachOptions['onChunk']>('onChunk', options.onChunk) ?? (() => {}),
    log: optionalFunction<AttachOptions['log']>('log', options.log) ?? ((m, err) => console.warn(`[sammy] ${m}`, err ?? '')),
  };
}
