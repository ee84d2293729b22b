/**
 * One playback session of the Sammy algorithm: the phase, the session's throughput
 * samples, and the history hand-off at the end of the initial phase. It is stateful but
 * pure: no clock, no player, no I/O except through the history's store. The dash.js
 * adapter and the simulator drive it with the same calls:
 *
 *   decide({ bufferS, segmentIndex })   before each video chunk request
 *   addSample({ sizeBytes, downloadS, phase, rtpKbps, firstByteS })   after each video chunk
 *   firstFrame()   when a frame is shown (ends the initial phase)
 *   seek()   when the user seeks
 *   rebuffer()   when playback stalls after startup
 *   checkDownload({ segmentIndex, rung, loadedBytes, elapsedS, bufferS })
 *       while a video chunk downloads: a rung to refetch it at, or null (stall.ts)
 *
 * Phases (thesis 2.4.1): `initial` from the play request to the first frame, unpaced,
 * rung from the history; `playing` after it, paced.
 * - After a rebuffer the session stays `playing` and keeps pacing. The buffer is then
 *   empty, so the pace is at its highest (11x the top bitrate, above the Eq. 2.1 floor
 *   of top / beta); a link slower than that is not held back by pacing at all, so
 *   unpacing would add burstiness without refilling the buffer any faster.
 * - A seek starts a new initial phase: the user waits for a frame again, the goal is
 *   the shortest delay (thesis 2.4.1), so requests go unpaced until the next frame.
 *   Until then the estimate comes from unpaced throughput only, as at a session's start:
 *   what was fetched since the seek, else the history, else the session's own
 *   initial-phase samples. Paced playing-phase chunks measure the pace, not the path,
 *   and would start the seek on too low a rung. After the next frame the usual window
 *   of recent samples applies again. The history is written once per session, at the
 *   first startup, so seeks do not outweigh sessions.
 */
import { bufferReserve, resolveSammyConfig, type SammyConfig } from './config.js';
import type { InitialThroughputHistory } from './history.js';
import { stableRung } from './stability.js';
import { clampRung, type Ladder } from './ladder.js';
import { paceFor, type Pace } from './pace.js';
import type { Phase } from './phase.js';
import { stallVerdict, type DownloadProgress, type StallVerdict } from './stall.js';
import { harmonicMean, isLinkBound, isPaced, isUsableSample, linkKbps, sampleKbps, type ThroughputSample } from './throughput.js';

export type EstimateSource = 'session' | 'history' | 'none';

export interface DecisionInput {
  /** Media buffered ahead of the playhead (B_0). */
  bufferS: number;
  /** 0-based index of the segment about to be requested. */
  segmentIndex: number;
  /** The highest rung the player may choose now (resolution or user cap); default: the ladder's top. */
  maxRung?: number;
}

export interface Decision {
  phase: Phase;
  rung: number;
  /** null: unpaced (initial phase). */
  paceKbps: number | null;
  /** The CMCD rtp to send: the pace rounded up; null when unpaced. */
  rtpKbps: number | null;
  /** One line a person can read: why this rung, why this rate. */
  reason: string;
  estimateKbps: number | null;
  estimateSource: EstimateSource;
  /** HYB's B_T for the chosen rung; null under the no-history rule. */
  predictedBufferS: number | null;
  /** The pace computation in full (also computed in the initial phase, where it is not sent). */
  pace: Pace;
}

export interface SessionOptions {
  ladder: Ladder;
  /** Overrides of DEFAULT_SAMMY_CONFIG. */
  config?: Partial<SammyConfig>;
  /** The device history; null or absent: none (the no-history rule applies). */
  history?: InitialThroughputHistory | null;
}

const PACE_BOUND_TEXT: Record<Pace['bound'], string> = { buffer: 'buffer-based', floor: 'Eq. 2.1 floor', link: 'under the link' };

function fmt(kbps: number | null): string {
  return kbps === null ? 'none' : `${Math.round(kbps)} kbps`;
}

export class SammySession {
  readonly config: SammyConfig;
  readonly ladder: Ladder;
  private currentPhase: Phase = 'initial';
  private readonly samples: ThroughputSample[] = [];
  private readonly history: InitialThroughputHistory | null;
  /** Read once when the session starts: what earlier sessions left. */
  readonly historyEstimateKbps: number | null;
  private historyRecorded = false;
  private stalls = 0;
  private seeks = 0;
  /** The rung of the last decision (the stability rule's current rung); null before the first. */
  private currentRung: number | null = null;
  /** Index in `samples` of the first sample after the last seek; null before any seek. */
  private seekSampleStart: number | null = null;
  /** The last segment the stalled-download rule gave up (it acts once per segment); null before any. */
  private abandonedSegment: number | null = null;

  constructor(opts: SessionOptions) {
    if (opts.ladder.bitratesKbps.length === 0) throw new RangeError('the ladder has no rungs');
    this.ladder = opts.ladder;
    this.config = resolveSammyConfig(opts.config);
    this.history = opts.history ?? null;
    this.historyEstimateKbps = this.history?.estimateKbps() ?? null;
  }

  get phase(): Phase {
    return this.currentPhase;
  }

  get rebufferCount(): number {
    return this.stalls;
  }

  get seekCount(): number {
    return this.seeks;
  }

  /** The session's usable samples, oldest first. */
  sampleList(): readonly ThroughputSample[] {
    return this.samples;
  }

  /**
   * The throughput estimate x: in-session samples first, then the history, else none.
   * In the initial phase after a seek, only unpaced samples count (see the phase rules above).
   */
  estimate(): { kbps: number | null; source: EstimateSource } {
    if (this.currentPhase === 'initial' && this.seekSampleStart !== null) return this.estimateAfterSeek(this.seekSampleStart);
    const session = this.windowKbps(this.samples);
    if (session !== null) return { kbps: this.capByLatest(session, this.samples), source: 'session' };
    if (this.historyEstimateKbps !== null) return { kbps: this.historyEstimateKbps, source: 'history' };
    return { kbps: null, source: 'none' };
  }

  /**
   * The lowest `rate` among the last `window` chunks that measured the link (with
   * `pacedOnly`, among those that were paced: their pace was above what the link
   * carried); null when none did.
   */
  private slowestLinkBound(window: number, rate: (s: ThroughputSample) => number, pacedOnly = false): number | null {
    const bound = this.samples
      .slice(-window)
      .filter((s) => (!pacedOnly || isPaced(s)) && isLinkBound(s, this.config.linkBoundPaceFraction));
    return bound.length === 0 ? null : Math.min(...bound.map(rate));
  }

  /**
   * Under the reserve R, the lowest throughput among the last reserveSampleWindow chunks
   * that measured the link (config.ts); null at or above R, with the rule off, or when
   * none of them was link-bound.
   */
  private reserveCautionKbps(bufferS: number): number | null {
    const { reserveSampleWindow } = this.config;
    if (reserveSampleWindow === 0 || !(bufferS < bufferReserve(this.config).reserveS)) return null;
    return this.slowestLinkBound(reserveSampleWindow, sampleKbps);
  }

  /**
   * What the link carried (`linkKbps`: the body's rate, the round trip left out) in the
   * slowest of the last linkPaceWindow chunks that were paced and still link-bound, for
   * the pace under the link (pace.ts); null with less than linkPaceMinBufferS buffered,
   * with the rule off, or when there is none. An unpaced chunk (the startup's, in TCP's
   * slow start) does not say whether a pace would have been above the link.
   */
  private pacedLinkKbps(bufferS: number): number | null {
    const { linkPaceFraction, linkPaceWindow, linkPaceMinBufferS } = this.config;
    if (linkPaceFraction === 0 || !(bufferS >= linkPaceMinBufferS)) return null;
    return this.slowestLinkBound(linkPaceWindow, linkKbps, true);
  }

  /** `kbps`, at most lastSampleCapMultiplier times the latest of `samples` (config.ts). */
  private capByLatest(kbps: number, samples: readonly ThroughputSample[]): number {
    const latest = samples.at(-1);
    return latest === undefined ? kbps : Math.min(kbps, this.config.lastSampleCapMultiplier * sampleKbps(latest));
  }

  /** Harmonic mean of the last throughputWindow of these samples. */
  private windowKbps(samples: readonly ThroughputSample[]): number | null {
    return harmonicMean(samples.slice(-this.config.throughputWindow).map(sampleKbps));
  }

  private estimateAfterSeek(from: number): { kbps: number | null; source: EstimateSource } {
    const unpaced = (list: readonly ThroughputSample[]) => list.filter((s) => s.phase === 'initial');
    const sinceSeek = this.windowKbps(unpaced(this.samples.slice(from)));
    if (sinceSeek !== null) return { kbps: sinceSeek, source: 'session' };
    // Read again: the history now holds this session's own startup too.
    const history = this.history?.estimateKbps() ?? null;
    if (history !== null) return { kbps: history, source: 'history' };
    const startup = this.windowKbps(unpaced(this.samples));
    if (startup !== null) return { kbps: startup, source: 'session' };
    return { kbps: null, source: 'none' };
  }

  /** The pace for a request now; the rtp is null in the initial phase (unpaced). */
  pace(input: DecisionInput): { rtpKbps: number | null; pace: Pace } {
    const maxRung = clampRung(this.ladder, input.maxRung);
    const linkKbps = this.pacedLinkKbps(input.bufferS);
    const pace = paceFor(this.ladder, this.config, { bufferS: input.bufferS, segmentIndex: input.segmentIndex, maxRung, linkKbps });
    return { rtpKbps: this.currentPhase === 'playing' ? pace.rtpKbps : null, pace };
  }

  decide(input: DecisionInput): Decision {
    const maxRung = clampRung(this.ladder, input.maxRung);
    const { kbps: windowKbps, source } = this.estimate();
    const cautionKbps = windowKbps === null ? null : this.reserveCautionKbps(input.bufferS);
    const cautious = cautionKbps !== null && cautionKbps < windowKbps!;
    const kbps = cautious ? cautionKbps : windowKbps;
    const { rtpKbps, pace } = this.pace({ ...input, maxRung });
    const paced = rtpKbps !== null;
    const paceText = paced
      ? `pace ${fmt(pace.paceKbps)} (${PACE_BOUND_TEXT[pace.bound]}), rtp ${rtpKbps}`
      : 'unpaced (initial phase)';
    const common = { phase: this.currentPhase, paceKbps: paced ? pace.paceKbps : null, rtpKbps, estimateKbps: kbps, estimateSource: source, pace };

    if (kbps === null) {
      const rung = Math.min(clampRung(this.ladder, this.config.noHistoryRung), maxRung);
      this.currentRung = rung;
      return { ...common, rung, predictedBufferS: null, reason: `no history and no sample yet: rung ${rung} (no-history rule); ${paceText}` };
    }
    const choice = stableRung(
      this.ladder,
      {
        bufferS: Math.max(0, input.bufferS),
        segmentIndex: input.segmentIndex,
        estimateKbps: kbps,
        maxRung,
        beta: this.config.beta,
        lookaheadSegments: this.config.lookaheadSegments,
        currentRung: this.currentRung === null ? null : Math.min(this.currentRung, maxRung),
      },
      this.config,
    );
    const rung = choice.rung;
    this.currentRung = rung;
    const caution = cautious
      ? `; under the reserve the estimate is the slowest link-bound chunk of the last ${this.config.reserveSampleWindow} (${fmt(kbps)}, the window says ${fmt(windowKbps)})`
      : '';
    const why = choice.noSafeRung
      ? `no rung keeps B_T > 0 at ${fmt(kbps)} (${source}): lowest rung`
      : choice.heldBelowRung !== null
        ? `stable: rung ${rung} (B_T = ${choice.predictedBufferS.toFixed(1)} s) rather than HYB's ${choice.heldBelowRung} at ${fmt(kbps)} (${source}): the up-switch is not sustained or would not keep the reserve`
        : `HYB: rung ${rung} keeps B_T = ${choice.predictedBufferS.toFixed(1)} s > 0 at ${fmt(kbps)} (${source})`;
    return { ...common, rung, predictedBufferS: choice.predictedBufferS, reason: `${why}${caution}; ${paceText}` };
  }

  /**
   * A video chunk in flight (stall.ts): the rung to give it up for, or null to let it
   * run. Only in the playing phase (before the first frame the buffer does not drain)
   * and once per segment. Giving up records what the chunk carried so far as a sample,
   * so the estimate, capped by the latest sample, sees the fall at once, and makes the
   * new rung the current one.
   */
  checkDownload(progress: DownloadProgress): StallVerdict | null {
    if (this.currentPhase !== 'playing' || this.abandonedSegment === progress.segmentIndex) return null;
    const verdict = stallVerdict(this.ladder, this.config, progress);
    if (verdict === null) return null;
    this.abandonedSegment = progress.segmentIndex;
    this.addSample({ sizeBytes: progress.loadedBytes, downloadS: progress.elapsedS, phase: 'playing' });
    this.currentRung = verdict.rung;
    return verdict;
  }

  /**
   * A downloaded video chunk; unusable samples (zero bytes or time) are ignored, and an
   * rtp that is not a positive number is taken as none (the chunk then counts as unpaced).
   */
  addSample(sample: ThroughputSample): void {
    if (!isUsableSample(sample)) return;
    const rtp = sample.rtpKbps;
    this.samples.push({ ...sample, rtpKbps: typeof rtp === 'number' && Number.isFinite(rtp) && rtp > 0 ? rtp : null });
  }

  /**
   * A frame was shown: the initial phase (of the session or after a seek) ends. At the
   * session's first startup the initial-phase samples go into the history. Returns the
   * throughput recorded, or null.
   */
  firstFrame(): number | null {
    if (this.currentPhase === 'playing') return null;
    this.currentPhase = 'playing';
    if (this.historyRecorded || !this.history) return null;
    this.historyRecorded = true;
    return this.history.recordSession(this.samples);
  }

  /** The user sought: a new initial phase (unpaced) until the next frame. */
  seek(): void {
    this.seeks++;
    this.currentPhase = 'initial';
    this.seekSampleStart = this.samples.length;
  }

  /** Playback stalled after startup: the session stays in the playing phase (see above). */
  rebuffer(): void {
    this.stalls++;
  }
}
