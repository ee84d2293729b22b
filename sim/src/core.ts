/**
 * The one place the simulator reaches into the player's pure Sammy core
 * (`@sammy/player/abr`, player/src/abr/). The simulator imports it, never copies it:
 * the rung and pace a simulated Sammy session picks are the ones the browser would,
 * and the QoE summary is computed by the same function.
 */
export {
  ARM_REGISTRY,
  armsIn,
  dashjsBufferTimesS,
  DEFAULT_SAMMY_CONFIG,
  declaredFloorKbps,
  FIXED_RTP_TOP_MULTIPLIER,
  fixedRtpKbps,
  InitialThroughputHistory,
  SammySession,
  isSammyConfigKey,
  ladderFromSidecar,
  memoryStore,
  resolveSammyConfig,
  roundRtpKbps,
  SPIRAL_RULE,
  spiralRung,
  summarizeSession,
  type Arm,
  type ArmIn,
  type SimModel,
  type ChunkRecord,
  type KeyValueStore,
  type Phase,
  type SammyConfig,
  type SessionQoE,
} from '@sammy/player/abr';
