/**
 * Playback in real time without a media element: the playhead runs with the clock
 * once the first segment is buffered, stops when it reaches the end of what is
 * buffered (a rebuffer), and runs again once a segment's worth is buffered ahead of it
 * (the simulator's rule, `sim/src/session.ts`). Pure: the caller passes the time
 * (seconds since the play request) to every call, so the model is exact whenever it is
 * asked; nothing here reads a clock.
 */
export interface PlaybackEvents {
  /** The playhead stopped with the buffer empty, at `atS`. */
  stall?(atS: number): void;
}

export class PlaybackModel {
  private bufferedEndS = 0;
  private anchorMediaS = 0;
  private anchorS = 0;
  private playing = false;
  private stallStartS: number | null = null;
  playDelayS: number | null = null;
  rebufferCount = 0;
  /** Rebuffer time of stalls that ended. */
  private endedRebufferS = 0;

  constructor(
    /** Buffer ahead of the playhead needed to start, and to resume after a rebuffer. */
    private readonly startupBufferS: number,
    /** Media length: at its end the player plays what it has. */
    private readonly contentS: number,
    private readonly events: PlaybackEvents = {},
  ) {}

  get started(): boolean {
    return this.playDelayS !== null;
  }

  /** Brings the model to `nowS`: a playhead that reached the buffered end stalls there. */
  advance(nowS: number): void {
    if (!this.playing) return;
    const runOutS = this.anchorS + (this.bufferedEndS - this.anchorMediaS);
    if (nowS < runOutS || this.bufferedEndS >= this.contentS - 1e-9) return;
    this.playing = false;
    this.anchorMediaS = this.bufferedEndS;
    this.anchorS = runOutS;
    this.stallStartS = runOutS;
    this.rebufferCount += 1;
    this.events.stall?.(runOutS);
  }

  playheadS(nowS: number): number {
    this.advance(nowS);
    if (!this.playing) return this.anchorMediaS;
    return Math.min(this.bufferedEndS, this.anchorMediaS + (nowS - this.anchorS));
  }

  bufferS(nowS: number): number {
    return Math.max(0, this.bufferedEndS - this.playheadS(nowS));
  }

  get stalled(): boolean {
    return this.stallStartS !== null;
  }

  rebufferS(nowS: number): number {
    this.advance(nowS);
    return this.endedRebufferS + (this.stallStartS === null ? 0 : nowS - this.stallStartS);
  }

  /**
   * Media up to `endS` is now buffered (contiguously from 0). Returns `started` when
   * this starts playback (the first frame).
   */
  buffered(endS: number, nowS: number): 'started' | null {
    const head = this.playheadS(nowS);
    this.bufferedEndS = Math.max(this.bufferedEndS, endS);
    const enough = this.bufferedEndS - head >= this.startupBufferS - 1e-9 || this.bufferedEndS >= this.contentS - 1e-9;
    if (this.playing || !enough) return null;
    this.anchorMediaS = head;
    this.anchorS = nowS;
    this.playing = true;
    if (this.stallStartS !== null) {
      this.endedRebufferS += nowS - this.stallStartS;
      this.stallStartS = null;
      return null;
    }
    if (this.playDelayS === null) {
      this.playDelayS = nowS;
      return 'started';
    }
    return null;
  }
}
