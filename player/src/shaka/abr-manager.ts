/**
 * The Sammy bitrate choice as a Shaka Player 5 `AbrManager` (`abrFactory` in the player
 * config). Shaka asks `chooseVariant()` when it starts a stream; after that an
 * AbrManager switches on its own with the switch callback. This one asks the playback
 * core once per video chunk, when the chunk has arrived (`afterChunk`, from the
 * adapter's response filter): the next request leaves as soon as the chunk is appended
 * unless the buffer is full, so the buffer the decision assumes (the current one plus
 * the chunk, Eq. 2.2) is the one the next request will see or, at a full buffer, a
 * little more. The switch itself waits until Shaka has appended that chunk
 * (`onVideoAppended`, from the player's `segmentappended` event): a switch while Shaka
 * still handled the response made it fetch the same segment again (on loopback, the
 * first segment twice in 2 of 3 loads). The rtp is computed per request, at the
 * request's own buffer.
 *
 * Shaka's per-progress `segmentDownloaded` samples are not used: the core takes one
 * throughput sample per chunk (request sent to last byte), the same in every player.
 * Any failure keeps the current variant and logs; nothing throws into Shaka.
 */
import type shaka from 'shaka-player';
import { guarded, type PlaybackCore } from '../browser/playback.js';

type Variant = shaka.extern.Variant;
type Restrictions = shaka.extern.Restrictions;

/** The encoder's Representation ids are the rungs 0..N-1. */
export function rungOf(variant: Variant): number | null {
  const rung = Number(variant.video?.originalId);
  return Number.isInteger(rung) ? rung : null;
}

/** Variants within `restrictions` (an AbrManager must apply them itself), lowest rung first. */
export function allowedVariants(variants: readonly Variant[], r: Partial<Restrictions> | undefined): Variant[] {
  const within = (value: number | undefined, min = 0, max = Infinity) => value === undefined || (value >= min && value <= max);
  return variants
    .filter((v) => rungOf(v) !== null)
    .filter((v) => !r || (within(v.bandwidth, r.minBandwidth, r.maxBandwidth) && within(v.video?.height, r.minHeight, r.maxHeight) && within(v.video?.width, r.minWidth, r.maxWidth)))
    .sort((a, b) => rungOf(a)! - rungOf(b)!);
}

export class SammyAbrManager implements shaka.extern.AbrManager {
  private switchTo: shaka.extern.AbrManager.SwitchCallback | null = null;
  private variants: Variant[] = [];
  private restrictions: Partial<Restrictions> | undefined;
  private enabled = false;
  private current: Variant | null = null;
  /** The variant decided when the last video chunk arrived, switched to once Shaka has appended it. */
  private pendingSwitch: Variant | null = null;

  constructor(
    private readonly core: PlaybackCore,
    private readonly log: (message: string, err?: unknown) => void,
  ) {}

  init(switchCallback: shaka.extern.AbrManager.SwitchCallback): void {
    this.switchTo = switchCallback;
  }

  stop(): void {
    this.switchTo = null;
    this.enabled = false;
    this.pendingSwitch = null;
  }

  release(): void {
    this.stop();
  }

  /**
   * Returns whether the set changed, as Shaka's own AbrManager does: Shaka asks again
   * right after a restriction change, and a `true` then makes it pick a variant and switch
   * with the buffer cleared. Always answering `true` emptied the buffer and stalled the
   * video on every restriction change (`maxHeight` mid-session); now, as with Shaka's own
   * manager, the buffer stays and the next choice keeps to the new restrictions.
   */
  setVariants(variants: Variant[]): boolean {
    const same = variants.length === this.variants.length && variants.every((v) => this.variants.includes(v));
    this.variants = variants;
    return !same;
  }

  configure(config: shaka.extern.AbrConfiguration): void {
    this.restrictions = config.restrictions;
  }

  enable(): void {
    this.enabled = true;
  }

  disable(): void {
    this.enabled = false;
  }

  private allowed(): Variant[] {
    const list = allowedVariants(this.variants, this.restrictions);
    // Restrictions that exclude everything are Shaka's to report; play the lowest rung meanwhile.
    return list.length > 0 ? list : allowedVariants(this.variants, undefined).slice(0, 1);
  }

  /** The highest allowed variant at or below `rung` (the lowest if none is). */
  private variantFor(rung: number, allowed: Variant[]): Variant {
    return [...allowed].reverse().find((v) => rungOf(v)! <= rung) ?? allowed[0]!;
  }

  chooseVariant(): Variant {
    const allowed = this.allowed();
    const fallback = this.current ?? allowed[0]!;
    this.current = guarded(this.log, 'Sammy AbrManager failed; keeping the variant', fallback, () => {
      const first = this.current === null ? this.core.firstDecision() : null;
      const d = first ?? this.core.decide(rungOf(allowed.at(-1)!)!);
      return d ? this.variantFor(d.rung, allowed) : fallback;
    });
    return this.current;
  }

  /** A video chunk arrived: the rung for the next one, switched to once Shaka has appended this one. */
  afterChunk(): void {
    if (!this.enabled || !this.switchTo) return;
    guarded(this.log, 'Sammy AbrManager failed; keeping the variant', undefined, () => {
      const allowed = this.allowed();
      const d = this.core.decide(rungOf(allowed.at(-1)!)!, this.core.bufferS() + this.core.segmentDurationS);
      if (!d) return;
      const next = this.variantFor(d.rung, allowed);
      if (next === this.current) return;
      this.current = next;
      this.pendingSwitch = next;
    });
  }

  /** Shaka appended a video segment: the switch decided when it arrived goes out now. */
  onVideoAppended(): void {
    const next = this.pendingSwitch;
    this.pendingSwitch = null;
    if (!next || !this.enabled || !this.switchTo) return;
    guarded(this.log, 'Sammy AbrManager failed to switch; keeping the variant', undefined, () => this.switchTo!(next, false, 0));
  }

  segmentDownloaded(): void {}
  trySuggestStreams(): void {}
  playbackRateChanged(): void {}
  setMediaElement(): void {}
  setCmsdManager(): void {}

  getBandwidthEstimate(): number {
    const kbps = this.core.session?.estimate().kbps ?? null;
    return kbps === null ? NaN : kbps * 1000;
  }
}
