/**
 * The one place the simulator reaches into the player's pure Sammy core
 * (`@sammy/player/abr`, player/src/abr/). The simulator imports it, never copies it:
 * the rung and pace a simulated Sammy session picks are the ones the browser would,
 * and the QoE summary is computed by the same function.
 */
export {
  DEFAULT_SAMMY_CONFIG,
  InitialThroughputHistory,
  SammySession,
  isSammyConfigKey,
  ladderFromSidecar,
  memoryStore,
  resolveSammyConfig,
  roundRtpKbps,
  summarizeSession,
  type Arm,
  type ChunkRecord,
  type KeyValueStore,
  type Phase,
  type SammyConfig,
  type SessionQoE,
} from '@sammy/player/abr';
