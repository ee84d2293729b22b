/**
 * `@sammy/player/abr`: the pure Sammy core (thesis 2.4). No dash.js, no window, no
 * clock. The browser adapter (`src/dashjs/`) and the simulator (`sim/`) both drive a
 * {@link SammySession}; see session.ts for the call sequence and the phase rules.
 */
export { DEFAULT_SAMMY_CONFIG, SammyConfigError, bufferReserve, checkSammyField, isSammyConfigKey, pickSammyConfig, resolveSammyConfig, type BufferReserve, type SammyConfig } from './config.js';
export { bytesToKbit, clampRung, ladderFromSidecar, lookahead, segmentCount, topRung, type Ladder, type LadderSource, type Lookahead } from './ladder.js';
export { HISTORY_KEY, InitialThroughputHistory, memoryStore, type KeyValueStore } from './history.js';
export { hybRung, predictedBufferS, type HybInput, type HybResult } from './hyb.js';
export { bufferBasedPaceKbps, bufferFraction, declaredFloorKbps, eq21FloorKbps, fullBufferS, paceFor, roundRtpKbps, type Pace, type PaceInput } from './pace.js';
export { keptBufferS, stableRung, type StabilityRule, type StableInput, type StableResult } from './stability.js';
export { stallVerdict, type DownloadProgress, type StallRule, type StallVerdict } from './stall.js';
export { SammySession, type Decision, type DecisionInput, type EstimateSource, type SessionOptions } from './session.js';
export { aggregateKbps, harmonicMean, isUsableSample, sampleKbps, type ThroughputSample } from './throughput.js';
export { playedSegments, summarizeSession, type PlayedSegment, type SessionSummaryInput } from './qoe.js';
export { type ChunkRecord, type Phase, type SessionQoE } from './records.js';
export {
  ARM_PARAMS,
  ARM_REGISTRY,
  ARMS,
  armSpec,
  armsFor,
  armsIn,
  dashjsBufferTimesS,
  fixedRtpKbps,
  FIXED_RTP_TOP_MULTIPLIER,
  isArmName,
  PLAYERS,
  SPIRAL_RULE,
  spiralRung,
  type Arm,
  type ArmIn,
  type ArmName,
  type ArmParam,
  type ArmParams,
  type ArmSpec,
  type ArmVenue,
  type BitrateRule,
  type DashjsBufferTimesS,
  type OwnRtp,
  type PlayerName,
  type RtpChoice,
  type RtpInput,
  type SimModel,
  type SpiralRule,
} from './arms/index.js';
