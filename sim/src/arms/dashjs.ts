/**
 * A model of dash.js 5.2.1's default ABR for video, for the `control` and `fixed4x`
 * arms. Read from the dash.js sources shipped in `node_modules/dashjs` (the
 * `dist/modern/esm/dash.mediaplayer.debug.js.map` source map carries them):
 * `streaming/models/ThroughputModel.js`, `streaming/controllers/ThroughputController.js`,
 * `streaming/controllers/AbrController.js`, `streaming/rules/abr/ABRRulesCollection.js`,
 * `ThroughputRule.js`, `BolaRule.js`, `InsufficientBufferRule.js`,
 * `SwitchHistoryRule.js`, `AbandonRequestsRule.js`, `streaming/utils/DOMStorage.js`,
 * `streaming/controllers/ScheduleController.js` and the defaults in `core/Settings.js`. README "The control arm" lists what is modelled and
 * what is left out.
 */
import type { SegmentsSidecar } from '@sammy/encoder/sidecar';
import { DEFAULT_SAMMY_CONFIG, fixedRtpKbps } from '../core.js';
import type { ArmPolicy, ChunkDone, Decision, DecisionContext, DownloadProgress, SimArm } from './types.js';

/** dash.js settings the model reads, named after them (units in the suffix). */
export interface DashJsSettings {
  /** streaming.abr.throughput.bandwidthSafetyFactor */
  bandwidthSafetyFactor: number;
  /** streaming.abr.throughput.ewma.throughputFastHalfLifeSeconds */
  throughputFastHalfLifeS: number;
  /** streaming.abr.throughput.ewma.throughputSlowHalfLifeSeconds */
  throughputSlowHalfLifeS: number;
  /** streaming.abr.throughput.ewma.weightDownloadTimeMultiplicationFactor (per ms of download) */
  weightDownloadTimeMultiplicationFactor: number;
  /** streaming.abr.hybridSwitchBufferTime: BOLA takes over at this buffer, hands back at half. */
  hybridSwitchBufferTimeS: number;
  /** streaming.abr.rules.insufficientBufferRule.parameters.throughputSafetyFactor */
  insufficientBufferSafetyFactor: number;
  /** streaming.abr.rules.insufficientBufferRule.parameters.segmentIgnoreCount */
  insufficientBufferSegmentIgnoreCount: number;
  /** streaming.abr.rules.switchHistoryRule.parameters.sampleSize */
  switchHistorySampleSize: number;
  /** streaming.abr.rules.switchHistoryRule.parameters.switchPercentageThreshold */
  switchPercentageThreshold: number;
  /** streaming.buffer.stallThreshold: at or below it the buffer state is "empty". */
  stallThresholdS: number;
  /** streaming.buffer.bufferTimeDefault: buffer target below the top rung, and BOLA's buffer time. */
  bufferTimeDefaultS: number;
  /** streaming.buffer.bufferTimeAtTopQuality */
  bufferTimeAtTopQualityS: number;
  /** streaming.buffer.bufferTimeAtTopQualityLongForm */
  bufferTimeAtTopQualityLongFormS: number;
  /** streaming.buffer.longFormContentDurationThreshold */
  longFormContentDurationThresholdS: number;
  /** AbrController DEFAULT_VIDEO_BITRATE: the first rung's bitrate bound with no saved bitrate and no samples. */
  initialBitrateKbps: number;
  /**
   * The saved-bitrate cache (streaming.lastBitrateCachingInfo, on by default, 6 min ttl):
   * what an earlier session on this device saved, i.e. its throughput estimate at its
   * last quality change (`DashJsArm.savedBitrateKbps()`); it bounds the first rung
   * instead of initialBitrateKbps. null: none, or older than the ttl.
   */
  savedBitrateKbps: number | null;
  /** streaming.abr.rules.abandonRequestsRule.active */
  abandonRequests: boolean;
  /** abandonRequestsRule.parameters.abandonDurationMultiplier: abandon only downloads predicted to take longer than this many segment durations. */
  abandonDurationMultiplier: number;
  /** abandonRequestsRule.parameters.minSegmentDownloadTimeThresholdInMs, in seconds: not before this long after the first byte. */
  abandonMinDownloadS: number;
  /** streaming.abandonLoadTimeout, in seconds: after an abandonment, no up-switch for this long. */
  abandonLoadTimeoutS: number;
}

export const DASHJS_DEFAULTS: Readonly<DashJsSettings> = Object.freeze({
  bandwidthSafetyFactor: 0.9,
  throughputFastHalfLifeS: 3,
  throughputSlowHalfLifeS: 8,
  weightDownloadTimeMultiplicationFactor: 0.0015,
  hybridSwitchBufferTimeS: 12,
  insufficientBufferSafetyFactor: 0.7,
  insufficientBufferSegmentIgnoreCount: 2,
  switchHistorySampleSize: 8,
  switchPercentageThreshold: 0.075,
  stallThresholdS: 0.3,
  bufferTimeDefaultS: 18,
  bufferTimeAtTopQualityS: 30,
  bufferTimeAtTopQualityLongFormS: 60,
  longFormContentDurationThresholdS: 600,
  initialBitrateKbps: 1000,
  savedBitrateKbps: null,
  abandonRequests: true,
  abandonDurationMultiplier: 1.8,
  abandonMinDownloadS: 0.5,
  abandonLoadTimeoutS: 10,
});

/** BolaRule.js constants. */
const BOLA_MINIMUM_BUFFER_S = 10;
const BOLA_MINIMUM_BUFFER_PER_BITRATE_LEVEL_S = 2;
const BOLA_PLACEHOLDER_BUFFER_DECAY = 0.99;

/**
 * ThroughputModel's EWMA for one media type: each sample weighs its download time
 * (0.0015 per ms, i.e. half-lives of 2 s and 5.3 s of downloading), a fast and a slow
 * estimate, the lower one wins; startup bias corrected as dash.js does.
 */
export class DashJsThroughputEstimator {
  private fast = 0;
  private slow = 0;
  private totalWeight = 0;

  constructor(private readonly s: DashJsSettings) {}

  /**
   * One segment. dash.js measures with the Resource Timing API: transferSize over
   * responseEnd - responseStart, i.e. from the first byte, without the request latency.
   */
  addSegment(sizeBytes: number, transferS: number): void {
    const transferMs = Math.max(transferS * 1000, 1);
    const valueKbps = Math.round((8 * sizeBytes) / transferMs);
    const weight = this.s.weightDownloadTimeMultiplicationFactor * transferMs;
    const fastAlpha = Math.pow(0.5, weight / this.s.throughputFastHalfLifeS);
    const slowAlpha = Math.pow(0.5, weight / this.s.throughputSlowHalfLifeS);
    this.fast = (1 - fastAlpha) * valueKbps + fastAlpha * this.fast;
    this.slow = (1 - slowAlpha) * valueKbps + slowAlpha * this.slow;
    this.totalWeight += weight;
  }

  /** ThroughputController.getAverageThroughput (EWMA mode); NaN before any sample. */
  averageKbps(): number {
    if (this.totalWeight <= 0) return NaN;
    const fast = this.fast / (1 - Math.pow(0.5, this.totalWeight / this.s.throughputFastHalfLifeS));
    const slow = this.slow / (1 - Math.pow(0.5, this.totalWeight / this.s.throughputSlowHalfLifeS));
    return Math.round(Math.min(fast, slow));
  }

  /** getSafeAverageThroughput: the average times bandwidthSafetyFactor. */
  safeAverageKbps(): number {
    return this.averageKbps() * this.s.bandwidthSafetyFactor;
  }
}

/** AbrController.getOptimalRepresentationForBitrate: the highest rung at or below the bitrate, else the lowest. */
export function rungForBitrate(bitratesKbps: readonly number[], kbps: number): number {
  if (!(kbps > 0)) return 0;
  let rung = 0;
  for (let i = 0; i < bitratesKbps.length; i++) if (bitratesKbps[i]! <= kbps) rung = i;
  return rung;
}

type BufferState = 'loaded' | 'empty' | undefined;

/** BolaRule's per-media-type state. */
interface BolaState {
  state: 'startup' | 'steady';
  placeholderBufferS: number;
  currentRung: number;
  lastSegmentStartS: number;
  lastSegmentDurationS: number;
  lastSegmentRequestS: number;
  lastSegmentFinishS: number;
  lastCallS: number;
}

/** BOLA's utilities and parameters for a ladder (BolaRule _getInitialBolaState / _calculateBolaParameters). */
export class BolaModel {
  readonly utilities: number[];
  readonly vp: number;
  readonly gp: number;

  constructor(private readonly bitratesKbps: readonly number[], bufferTimeDefaultS: number) {
    const logs = bitratesKbps.map((b) => Math.log(b * 1000));
    this.utilities = logs.map((u) => u - logs[0]! + 1);
    const bufferTimeS = Math.max(bufferTimeDefaultS, BOLA_MINIMUM_BUFFER_S + BOLA_MINIMUM_BUFFER_PER_BITRATE_LEVEL_S * bitratesKbps.length);
    this.gp = (this.utilities[this.utilities.length - 1]! - 1) / (bufferTimeS / BOLA_MINIMUM_BUFFER_S - 1);
    this.vp = BOLA_MINIMUM_BUFFER_S / this.gp;
  }

  /** The rung maximising (Vp (u - 1 + gp) - buffer) / bitrate; ties go to the higher rung. */
  rungForBuffer(bufferS: number): number {
    let best = 0;
    let bestScore = NaN;
    for (let i = 0; i < this.utilities.length; i++) {
      const score = (this.vp * (this.utilities[i]! - 1 + this.gp) - bufferS) / (this.bitratesKbps[i]! * 1000);
      if (Number.isNaN(bestScore) || score >= bestScore) {
        bestScore = score;
        best = i;
      }
    }
    return best;
  }

  /** Above this buffer BOLA would rather wait than download the rung. */
  maxBufferForRung(rung: number): number {
    return this.vp * (this.utilities[rung]! + this.gp);
  }

  /** The least buffer at which BOLA prefers the rung to every lower one. */
  minBufferForRung(rung: number): number {
    const qBitrate = this.bitratesKbps[rung]! * 1000;
    const qUtility = this.utilities[rung]!;
    let min = 0;
    for (let i = rung - 1; i >= 0; i--) {
      if (this.utilities[i]! < qUtility) {
        const iBitrate = this.bitratesKbps[i]! * 1000;
        const level = this.vp * (this.gp + (qBitrate * this.utilities[i]! - iBitrate * qUtility) / (qBitrate - iBitrate));
        min = Math.max(min, level);
      }
    }
    return min;
  }
}

export interface DashJsArmOptions {
  sidecar: SegmentsSidecar;
  /** Media duration of the session, for dash.js's long-form buffer target. */
  contentDurationS: number;
  settings?: Partial<DashJsSettings>;
  /** `fixed4x`: rtp = this multiple of the top bitrate on every request (thesis 2.5.4). */
  paceTopMultiplier?: number;
  /** The arm's name in the registry; default `control`, or `fixed4x` with a pace multiplier. */
  arm?: SimArm;
}

/**
 * dash.js's default ABR for video. Per segment request, the active rules each may
 * propose a rung and the lowest proposal wins (ABRRulesCollection.getMinSwitchRequest,
 * all rules at DEFAULT priority):
 * - ThroughputRule or BolaRule, one at a time (the DYNAMIC strategy: BOLA from a
 *   12 s buffer until it falls below 6 s);
 * - InsufficientBufferRule (after the first two segments);
 * - SwitchHistoryRule.
 * With no proposal the rung stays; the first segment's rung is the highest at or below
 * the saved bitrate, else 1000 kbps (no samples yet). During a download the
 * AbandonRequestsRule may give it up for a lower rung (`onProgress`).
 */
export class DashJsArm implements ArmPolicy {
  readonly arm: SimArm;
  readonly config: Record<string, unknown>;
  private readonly s: DashJsSettings;
  private readonly bitratesKbps: number[];
  private readonly topRung: number;
  private readonly estimator: DashJsThroughputEstimator;
  private readonly bola: BolaModel;
  private readonly segmentDurationS: number;
  private readonly longForm: boolean;
  private readonly rtpKbps: number | null;
  private currentRung: number;
  private bufferState: BufferState;
  private useBola = false;
  private bolaState: BolaState | null = null;
  private appendedSegments = 0;
  /** SwitchHistoryRule's window of (from, to) decisions. */
  private switchHistory: { from: number; to: number }[] = [];
  /** AbandonRequestsRule: segments already abandoned once; no up-switch before this time (ABANDON_LOAD). */
  private readonly abandoned = new Set<number>();
  private abandonLoadUntilS = -Infinity;
  /** What dash.js would save in the bitrate cache now: the throughput estimate at the last quality change. */
  private savedKbps: number | null = null;

  constructor(options: DashJsArmOptions) {
    this.s = { ...DASHJS_DEFAULTS, ...options.settings };
    this.bitratesKbps = options.sidecar.representations.map((r) => r.bitrateKbps);
    this.topRung = this.bitratesKbps.length - 1;
    this.segmentDurationS = options.sidecar.segmentDurationS;
    this.estimator = new DashJsThroughputEstimator(this.s);
    this.bola = new BolaModel(this.bitratesKbps, this.s.bufferTimeDefaultS);
    this.longForm = options.contentDurationS >= this.s.longFormContentDurationThresholdS;
    // AbrController.getInitialBitrateFor: the saved bitrate, else DEFAULT_VIDEO_BITRATE.
    this.currentRung = rungForBitrate(this.bitratesKbps, this.s.savedBitrateKbps ?? this.s.initialBitrateKbps);
    const multiplier = options.paceTopMultiplier;
    this.rtpKbps = multiplier === undefined ? null : fixedRtpKbps(this.bitratesKbps[this.topRung]!, multiplier);
    this.arm = options.arm ?? (multiplier === undefined ? 'control' : 'fixed4x');
    this.config = { model: 'dash.js 5.2.1 default ABR (DYNAMIC: Throughput/BOLA, InsufficientBuffer, SwitchHistory, AbandonRequests; fast switching off)', ...this.s };
    if (multiplier !== undefined) this.config.paceTopMultiplier = multiplier;
  }

  /** ScheduleController._getGenericBufferTarget. */
  bufferTargetS(currentRung: number): number {
    if (currentRung < this.topRung) return this.s.bufferTimeDefaultS;
    return this.longForm ? this.s.bufferTimeAtTopQualityLongFormS : this.s.bufferTimeAtTopQualityS;
  }

  private updateBufferState(bufferS: number, started: boolean): void {
    // BufferController.checkIfSufficientBuffer; "empty" is never signalled before playback starts.
    if (bufferS > this.s.stallThresholdS) this.bufferState = 'loaded';
    else if (started && this.appendedSegments > 0) {
      if (this.bufferState !== 'empty' && this.bolaState?.state === 'steady') this.bolaState.placeholderBufferS = 0;
      this.bufferState = 'empty';
    }
  }

  /** AbrController._updateDynamicAbrStrategy, with hysteresis. */
  private updateStrategy(bufferS: number): void {
    const threshold = this.useBola ? 0.5 * this.s.hybridSwitchBufferTimeS : this.s.hybridSwitchBufferTimeS;
    this.useBola = bufferS >= threshold;
  }

  private throughputRule(): number | null {
    const safeKbps = this.estimator.safeAverageKbps();
    if (Number.isNaN(safeKbps) || this.bufferState !== 'loaded') return null;
    return rungForBitrate(this.bitratesKbps, safeKbps);
  }

  private insufficientBufferRule(bufferS: number): number | null {
    if (this.appendedSegments < this.s.insufficientBufferSegmentIgnoreCount) return null;
    if (this.bufferState === 'empty') return 0;
    const kbps = (this.estimator.averageKbps() * this.s.insufficientBufferSafetyFactor * bufferS) / this.segmentDurationS;
    if (Number.isNaN(kbps) || kbps <= 0) return null;
    return rungForBitrate(this.bitratesKbps, kbps);
  }

  private switchHistoryRule(): number | null {
    let drops = 0;
    let noDrops = 0;
    for (let rung = 0; rung <= this.topRung; rung++) {
      let rungDrops = 0;
      for (const entry of this.switchHistory) {
        if (entry.from !== rung) continue;
        if (entry.to < entry.from) rungDrops += 1;
        else noDrops += 1;
      }
      drops += rungDrops;
      if (drops + noDrops >= this.s.switchHistorySampleSize && drops / noDrops > this.s.switchPercentageThreshold) {
        return rung > 0 && rungDrops > 0 ? rung - 1 : rung;
      }
    }
    return null;
  }

  /** BolaRule.getSwitchRequest, with its time-to-load delay. */
  private bolaRule(nowS: number, bufferS: number): { rung: number; delayS: number } | null {
    const safeKbps = this.estimator.safeAverageKbps();
    if (this.bolaState === null) {
      this.bolaState = {
        state: 'startup',
        placeholderBufferS: 0,
        currentRung: this.currentRung,
        lastSegmentStartS: NaN,
        lastSegmentDurationS: NaN,
        lastSegmentRequestS: NaN,
        lastSegmentFinishS: NaN,
        lastCallS: NaN,
      };
    }
    const st = this.bolaState;
    if (st.state === 'startup') {
      if (Number.isNaN(safeKbps)) return null;
      const rung = rungForBitrate(this.bitratesKbps, safeKbps);
      st.placeholderBufferS = Math.max(0, this.bola.minBufferForRung(rung) - bufferS);
      st.currentRung = rung;
      if (!Number.isNaN(st.lastSegmentDurationS) && bufferS >= st.lastSegmentDurationS) st.state = 'steady';
      return { rung, delayS: 0 };
    }
    // _updatePlaceholderBuffer: time since the last download (or call) does not count against BOLA.
    if (!Number.isNaN(st.lastSegmentFinishS)) st.placeholderBufferS += Math.max(0, nowS - st.lastSegmentFinishS);
    else if (!Number.isNaN(st.lastCallS)) st.placeholderBufferS += Math.max(0, nowS - st.lastCallS);
    st.lastCallS = nowS;
    st.lastSegmentStartS = NaN;
    st.lastSegmentRequestS = NaN;
    st.lastSegmentFinishS = NaN;

    let rung = this.bola.rungForBuffer(bufferS + st.placeholderBufferS);
    const throughputRung = rungForBitrate(this.bitratesKbps, safeKbps);
    if (rung > st.currentRung && rung > throughputRung) rung = throughputRung > st.currentRung ? throughputRung : st.currentRung;

    let delayS = Math.max(0, bufferS + st.placeholderBufferS - this.bola.maxBufferForRung(rung));
    if (delayS <= st.placeholderBufferS) {
      st.placeholderBufferS -= delayS;
      delayS = 0;
    } else {
      delayS -= st.placeholderBufferS;
      st.placeholderBufferS = 0;
      if (rung === this.topRung) delayS = 0;
    }
    st.currentRung = rung;
    return { rung, delayS };
  }

  decide(ctx: DecisionContext): Decision {
    this.updateBufferState(ctx.bufferS, ctx.started);
    this.updateStrategy(ctx.bufferS);
    const proposals: number[] = [];
    let delayS = 0;
    if (this.useBola) {
      const bola = this.bolaRule(ctx.nowS, ctx.bufferS);
      if (bola) {
        proposals.push(bola.rung);
        delayS = bola.delayS;
      }
    } else {
      const rung = this.throughputRule();
      if (rung !== null) proposals.push(rung);
    }
    const insufficient = this.insufficientBufferRule(ctx.bufferS);
    if (insufficient !== null) proposals.push(insufficient);
    const history = this.switchHistoryRule();
    if (history !== null) proposals.push(history);

    if (proposals.length > 0) {
      let next = Math.min(...proposals);
      // AbrController.checkPlaybackQuality: while ABANDON_LOAD, only down-switches go through.
      if (ctx.nowS < this.abandonLoadUntilS && next > this.currentRung) next = this.currentRung;
      this.switchHistory.push({ from: this.currentRung, to: next });
      if (this.switchHistory.length > this.s.switchHistorySampleSize) this.switchHistory.shift();
      // QUALITY_CHANGE_REQUESTED also moves BOLA's idea of the current rung.
      if (next !== this.currentRung && this.bolaState) this.bolaState.currentRung = next;
      if (next !== this.currentRung) this.saveBitrate();
      this.currentRung = next;
    }
    return { rung: this.currentRung, rtpKbps: this.rtpKbps, delayS };
  }

  /** AbrController._saveBitrateSettings, at each quality change: the average throughput. */
  private saveBitrate(): void {
    const kbps = this.estimator.averageKbps();
    if (!Number.isNaN(kbps)) this.savedKbps = kbps;
  }

  /** The saved-bitrate cache after this session: seed the next session's `savedBitrateKbps` with it. */
  savedBitrateKbps(): number | null {
    return this.savedKbps;
  }

  /**
   * AbandonRequestsRule.shouldAbandon: above the stable buffer time, on the lowest rung, or
   * sooner than abandonMinDownloadS after the first byte, never; otherwise, when the
   * throughput measured so far predicts more than abandonDurationMultiplier segment
   * durations for the whole segment, and fetching the rest would take more bytes than the
   * whole segment at the rung that throughput carries, switch to that rung (once per
   * segment). dash.js also waits for 6 progress events; at the simulator's 0.1 s events
   * that is earlier than the 0.5 s.
   */
  onProgress(p: DownloadProgress): number | null {
    if (!this.s.abandonRequests || this.abandoned.has(p.index) || p.rung === 0) return null;
    if (p.bufferS > this.s.bufferTimeDefaultS || p.sinceFirstByteS <= this.s.abandonMinDownloadS || p.loadedBytes >= p.sizeBytes) return null;
    const kbps = Math.round((8 * p.loadedBytes) / (p.sinceFirstByteS * 1000));
    if (!(kbps > 0) || (p.sizeBytes * 8) / kbps / 1000 < this.segmentDurationS * this.s.abandonDurationMultiplier) return null;
    const target = rungForBitrate(this.bitratesKbps, kbps);
    const targetBytes = (p.sizeBytes * this.bitratesKbps[target]!) / this.bitratesKbps[p.rung]!;
    if (p.sizeBytes - p.loadedBytes <= targetBytes) return null;
    this.abandoned.add(p.index);
    // _onSegmentDownloadShouldBeAbandoned: ABANDON_LOAD for abandonLoadTimeout, the switch history cleared.
    this.abandonLoadUntilS = p.nowS + this.s.abandonLoadTimeoutS;
    this.switchHistory = [];
    if (target !== this.currentRung) this.saveBitrate();
    this.currentRung = target;
    if (this.bolaState) this.bolaState.currentRung = target;
    return target;
  }

  onChunk(chunk: ChunkDone): void {
    this.estimator.addSegment(chunk.sizeBytes, chunk.endS - chunk.firstByteS);
    const st = this.bolaState;
    if (st) {
      // MEDIA_FRAGMENT_LOADED and the HTTP request metric, then _checkNewSegment.
      st.lastSegmentStartS = chunk.index * chunk.durationS;
      st.lastSegmentDurationS = chunk.durationS;
      st.currentRung = chunk.rung;
      st.lastSegmentRequestS = chunk.requestS;
      st.lastSegmentFinishS = chunk.endS;
      st.placeholderBufferS *= BOLA_PLACEHOLDER_BUFFER_DECAY;
      const bufferAtRequestS = chunk.bufferAtEndS + (chunk.endS - chunk.requestS);
      const maxPlaceholderS = Math.max(0, this.bola.maxBufferForRung(st.currentRung) - bufferAtRequestS);
      st.placeholderBufferS = Math.min(maxPlaceholderS, st.placeholderBufferS);
      st.lastSegmentStartS = NaN;
      st.lastSegmentRequestS = NaN;
    }
    this.appendedSegments += 1;
    this.updateBufferState(chunk.bufferAfterS, true);
    this.updateStrategy(chunk.bufferAfterS);
  }
}
