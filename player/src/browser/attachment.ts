/**
 * What every player plugin's handle shares (`SammyHandle`, options.ts): the segment
 * sizes and `ready`, the play request, the live playback (playback.ts) from the
 * player's first request on, the QoE and requests, the history, and `detach()`.
 * Each plugin (src/dashjs/, src/shaka/, src/hlsjs/) extends it with its player's
 * hooks: where the video element and its buffer are, how its hooks are installed and
 * removed, and what it does once the playback starts.
 */
import { DEFAULT_SEGMENT_DURATION_S, type SegmentsSidecar } from '@sammy/encoder/sidecar';
import { ARM_REGISTRY, type Arm, type PlayerName } from '../abr/arms/index.js';
import { summarizeSession } from '../abr/qoe.js';
import type { Phase, SessionQoE } from '../abr/records.js';
import type { AttachOptions } from './attach-options.js';
import type { SammyHandle, SentRequest } from './options.js';
import type { PlayerConfig } from './player-config.js';
import { PlaybackCore } from './playback.js';
import { keepResourceTimings } from './resource-timing.js';
import { loadSegments } from './segments.js';

export function pageUrl(): string {
  return typeof location === 'undefined' ? 'http://localhost/' : location.href;
}

export abstract class SammyAttachment implements SammyHandle {
  readonly ready: Promise<void>;
  protected readonly o: AttachOptions;
  /** The arm's bitrate is Sammy's (it runs the core once the segment sizes are there). */
  protected readonly sammyBitrate: boolean;
  /** The playback, from the player's first request on. */
  protected live: PlaybackCore | null = null;
  #settle!: { resolve: () => void; reject: (err: Error) => void };
  #settled = false;
  #segments: Promise<SegmentsSidecar | null> | null = null;
  #starting: Promise<void> | null = null;
  #playRequestedMs: number | null = null;
  #frozen: SessionQoE | null = null;

  constructor(
    readonly playerName: PlayerName,
    o: AttachOptions,
  ) {
    this.o = o;
    this.ready = new Promise<void>((resolve, reject) => {
      const settled = <T>(f: (x: T) => void) => (x: T) => {
        this.#settled = true;
        f(x);
      };
      this.#settle = { resolve: settled(resolve), reject: settled(reject) };
    });
    // The app need not listen: the reason is logged either way.
    this.ready.catch(() => {});
    this.sammyBitrate = ARM_REGISTRY[o.arm].bitrate === 'sammy';
    keepResourceTimings();
    // A source named by the options loads now, in parallel with the player starting up.
    if (o.segments !== undefined) this.#segments = this.#loadSegments(null);
  }

  /** The player's video element (known once the player has one). */
  protected abstract videoElement(): HTMLVideoElement;
  /** The player's video buffer ahead of the playhead. */
  protected abstract videoBufferS(): number;
  /** The highest video bitrate the player offers (for arms without the segment sizes). */
  protected abstract playerTopKbps(): number;
  /** Takes every hook the plugin installed off the player and gives its own settings back. */
  protected abstract uninstall(): void;
  /** The playback has started (segment sizes loaded or given up on), before the player goes on. */
  protected onStart(_live: PlaybackCore): void {}

  qoe(): SessionQoE {
    return this.#frozen ?? this.live?.collector.qoe() ?? this.#emptyQoe();
  }

  config(): PlayerConfig & { arm: Arm } {
    return { arm: this.o.arm, ...this.o.config };
  }

  phase(): Phase {
    return this.live?.collector.phase ?? 'initial';
  }

  requests(): readonly SentRequest[] {
    return this.live?.requests() ?? [];
  }

  playRequested(atMs: number = performance.now()): void {
    if (this.live || this.#starting) this.o.log('playRequested() after the manifest request is ignored: the play delay counts from that request');
    else this.#playRequestedMs = atMs;
  }

  history(): number[] | null {
    return this.o.history.sessionsKbps();
  }

  resetHistory(): void {
    this.o.history.reset();
  }

  detach(): void {
    if (this.#frozen) return;
    this.#frozen = this.qoe();
    if (!this.#settled) this.#settle.reject(new Error('Sammy was detached before the segment sizes were loaded'));
    this.uninstall();
    this.live?.collector.dispose();
  }

  protected get detached(): boolean {
    return this.#frozen !== null;
  }

  #emptyQoe(): SessionQoE {
    const config = PlaybackCore.qoeConfig(this.playerName, this.o.arm, null, this.o.config);
    return summarizeSession({ arm: this.o.arm, config, chunks: [], segmentDurationS: DEFAULT_SEGMENT_DURATION_S, ssim: null, playDelayS: null, rebufferCount: 0, rebufferS: 0, playedRanges: [] });
  }

  /** The segment sizes, or null without them (`ready` says which). */
  #loadSegments(manifestUrl: string | null): Promise<SegmentsSidecar | null> {
    return loadSegments(this.o.segments, manifestUrl, pageUrl()).then(
      (sidecar) => {
        this.#settle.resolve();
        return sidecar;
      },
      (err: Error) => {
        if (this.sammyBitrate) {
          this.o.log(`Sammy is off (the player plays with its own ABR and no rtp): ${err.message}`);
          this.#settle.reject(err);
        } else {
          // The other arms play without it; only SSIM is missing from their records.
          this.o.log(`${err.message}; SSIM unavailable`);
          this.#settle.resolve();
        }
        return null;
      },
    );
  }

  /**
   * The player's first request (normally the manifest, `manifestUrl` absolute): the
   * segment sizes, the QoE collector on the player's video element, and for Sammy's
   * bitrate the core, all before the player goes on. Adapters hold that request until
   * this resolves; later calls return the same promise.
   */
  protected start(manifestUrl: string | null): Promise<void> {
    return (this.#starting ??= this.#start(manifestUrl).catch((err: unknown) => this.#giveUp(err)));
  }

  /** Sammy could not start (no video element, say): the player goes on as if it had never been attached. */
  #giveUp(err: unknown): void {
    this.o.log('Sammy could not start; the player goes on without it', err);
    if (!this.#settled) this.#settle.reject(err instanceof Error ? err : new Error(String(err)));
    this.detach();
  }

  async #start(manifestUrl: string | null): Promise<void> {
    const sidecar = await (this.#segments ??= this.#loadSegments(manifestUrl));
    if (this.detached) return;
    this.live = new PlaybackCore(
      { video: this.videoElement(), manifestUrl, arm: this.o.arm, config: this.o.config, sidecar, history: this.o.history, playRequestedMs: this.#playRequestedMs, log: this.o.log, onChunk: this.o.onChunk },
      this.playerName,
      () => this.videoBufferS(),
      () => this.playerTopKbps(),
    );
    this.onStart(this.live);
  }
}
