/**
 * QoE in the browser: watches the video element (first frame, stalls, seeks, what was
 * played) and keeps one ChunkRecord per downloaded video chunk. The summary itself is
 * the core's `summarizeSession`, the same code the simulator uses.
 *
 * - Play delay: from the play request (the session start, or the Play click without
 *   autoplay) to the first frame presented (`requestVideoFrameCallback`; the
 *   `playing` event where that is missing).
 * - Phase: `initial` until that frame, `playing` after; a seek starts a new initial
 *   phase until the next frame (docs/algorithm.md, "Phases, rebuffers and seeks").
 * - Rebuffers: a `waiting` event in the playing phase that no seek caused, until
 *   `playing`; count and total seconds.
 * - Media errors: on a decode error dash.js rebuilds the MediaSource and seeks back to
 *   where it was (its `recoverAttempts.mediaErrorDecode`). Seen on slow cellular links
 *   when a request is abandoned mid-switch. The element's `error` counts as a media
 *   error and starts a rebuffer that lasts until playback goes on. The seeks of the
 *   rebuild are not user seeks. The element forgets `played` when it is emptied, so the
 *   ranges played before are kept here.
 */
import { summarizeSession } from '../abr/qoe.js';
import type { Arm, ChunkRecord, Phase, SessionQoE } from '../abr/records.js';

export interface CollectorEvents {
  /** A frame was shown after the play request or after a seek. */
  frame?: (afterSeek: boolean) => void;
  seek?: () => void;
  rebuffer?: () => void;
}

export class QoeCollector {
  private playRequestMs: number | null = null;
  private firstFrameMs: number | null = null;
  private currentPhase: Phase = 'initial';
  private stallStartMs: number | null = null;
  private stallCount = 0;
  private stallTotalMs = 0;
  private sought = false;
  private mediaErrorCount = 0;
  /** Set by a media error until playback goes on again: the player's rebuild, not the user, seeks meanwhile. */
  private recovering = false;
  /** `played` ranges of the element before it was last emptied. */
  private readonly playedBefore: [number, number][] = [];
  private readonly chunkList: ChunkRecord[] = [];
  private readonly listeners: [string, () => void][] = [
    ['seeking', () => this.onSeeking()],
    ['seeked', () => this.onSeeked()],
    ['waiting', () => this.onWaiting()],
    ['playing', () => this.endStall()],
    ['error', () => this.onMediaError()],
    ['emptied', () => this.playedBefore.push(...this.playedNow())],
  ];
  private disposed = false;

  constructor(
    private readonly video: HTMLVideoElement,
    private readonly now: () => number,
    private readonly info: { arm: Arm; config: Record<string, unknown>; segmentDurationS: number; ssim: number[][] | null },
    private readonly events: CollectorEvents = {},
  ) {
    for (const [type, listener] of this.listeners) video.addEventListener(type, listener);
  }

  /** Stops watching the element: no event reaches the collector or its listeners afterwards. */
  dispose(): void {
    this.disposed = true;
    for (const [type, listener] of this.listeners) this.video.removeEventListener(type, listener);
  }

  get phase(): Phase {
    return this.currentPhase;
  }

  /** Milliseconds since the play request (null before it). */
  sinceStartS(): number | null {
    return this.playRequestMs === null ? null : (this.now() - this.playRequestMs) / 1000;
  }

  /** The user (or autoplay) asked to play, at `atMs` on the collector's clock (default: now): the play delay is measured from here. */
  playRequested(atMs: number = this.now()): void {
    if (this.playRequestMs !== null) return;
    this.playRequestMs = atMs;
    this.awaitFrame();
  }

  addChunk(record: ChunkRecord): void {
    this.chunkList.push(record);
  }

  chunks(): readonly ChunkRecord[] {
    return this.chunkList;
  }

  qoe(): SessionQoE {
    const played = [...this.playedBefore, ...this.playedNow()];
    const stallMs = this.stallStartMs === null ? this.stallTotalMs : this.stallTotalMs + (this.now() - this.stallStartMs);
    return summarizeSession({
      arm: this.info.arm,
      config: this.info.config,
      chunks: [...this.chunkList],
      segmentDurationS: this.info.segmentDurationS,
      ssim: this.info.ssim,
      playDelayS: this.firstFrameMs === null || this.playRequestMs === null ? null : (this.firstFrameMs - this.playRequestMs) / 1000,
      rebufferCount: this.stallCount,
      rebufferS: stallMs / 1000,
      playedRanges: played,
      mediaErrors: this.mediaErrorCount,
    });
  }

  private playedNow(): [number, number][] {
    const out: [number, number][] = [];
    for (let i = 0; i < this.video.played.length; i++) out.push([this.video.played.start(i), this.video.played.end(i)]);
    return out;
  }

  private awaitFrame(): void {
    const onFrame = () => this.frameShown();
    if (typeof this.video.requestVideoFrameCallback === 'function') this.video.requestVideoFrameCallback(onFrame);
    else this.video.addEventListener('playing', onFrame, { once: true });
  }

  private frameShown(): void {
    // A frame callback asked for before dispose() may still come.
    if (this.disposed || this.currentPhase === 'playing') return;
    const afterSeek = this.firstFrameMs !== null;
    if (!afterSeek) this.firstFrameMs = this.now();
    this.currentPhase = 'playing';
    this.sought = false;
    this.events.frame?.(afterSeek);
  }

  private onSeeking(): void {
    // dash.js may set the start position before the first frame, or seek back after a rebuild: not a user seek.
    if (this.firstFrameMs === null || this.recovering) return;
    this.endStall();
    this.sought = true;
    if (this.currentPhase === 'playing') {
      this.currentPhase = 'initial';
      this.events.seek?.();
    }
  }

  private onSeeked(): void {
    if (this.sought) this.awaitFrame();
  }

  private onWaiting(): void {
    if (this.currentPhase !== 'playing' || this.video.seeking || this.video.ended || this.stallStartMs !== null) return;
    this.stallStartMs = this.now();
    this.stallCount++;
    this.events.rebuffer?.();
  }

  private onMediaError(): void {
    this.mediaErrorCount++;
    if (this.currentPhase !== 'playing') return;
    this.recovering = true;
    if (this.stallStartMs !== null) return;
    this.stallStartMs = this.now();
    this.stallCount++;
    this.events.rebuffer?.();
  }

  private endStall(): void {
    this.recovering = false;
    if (this.stallStartMs === null) return;
    this.stallTotalMs += this.now() - this.stallStartMs;
    this.stallStartMs = null;
  }
}
