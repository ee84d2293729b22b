/**
 * The Sammy bitrate choice as an hls.js ABR controller (the `abrController` config
 * class). hls.js reads `firstAutoLevel` for the first fragment and `nextAutoLevel` on
 * every tick of its stream controller before it picks the next fragment, whether or
 * not it will load one; so the controller asks the playback once per video chunk (the
 * first read after the previous chunk arrived) and answers every later read with that
 * decision, and the core's stability rule sees one decision per chunk. The next request
 * leaves at once unless the buffer is full, so that decision is taken at the buffer the
 * request will see or, at a full buffer, a little more. The rtp is computed per
 * request, at the request's own buffer (adapter.ts).
 *
 * While the core does not run (no segment sizes, or detached) every question goes to
 * hls.js's own AbrController, which the controller keeps beside it from the start so
 * its estimate is warm. Levels are mapped to rungs through their playlist names
 * (`media-<id>.m3u8`, the encoder's Representation ids); hls.js's own caps
 * (`autoLevelCapping`, ...) set the highest allowed level. Any failure keeps the last
 * level and logs.
 */
import type Hls from 'hls.js';
import type { AbrComponentAPI, Level } from 'hls.js';
import { guarded, type PlaybackCore } from '../browser/playback.js';

const MEDIA_PLAYLIST = /media-(\d+)\.m3u8(?:$|\?)/;

/** The rung of each hls.js level index (the encoder's ids), else its position. */
export function levelRungs(levels: readonly Pick<Level, 'url'>[]): number[] {
  return levels.map((level, i) => {
    const m = MEDIA_PLAYLIST.exec(level.url[0] ?? '');
    return m ? Number(m[1]) : i;
  });
}

/** The highest allowed level (index) whose rung is at or below `rung`; the lowest allowed if none. */
export function levelFor(rungs: readonly number[], rung: number, minLevel: number, maxLevel: number): number {
  let pick = minLevel;
  for (let i = minLevel; i <= maxLevel; i++) if (rungs[i]! <= rung && rungs[i]! >= rungs[pick]!) pick = i;
  return pick;
}

/** hls.js reads its bandwidth estimate (CMCD `mtp`, `hls.bandwidthEstimate`) from the controller: the core's estimate. */
function coreEstimator(core: PlaybackCore, fallbackBps: () => number) {
  const bps = () => {
    const kbps = core.session?.estimate().kbps ?? null;
    return kbps === null ? fallbackBps() : kbps * 1000;
  };
  return { getEstimate: bps, getEstimateTTFB: () => 0, get defaultEstimate() { return fallbackBps(); }, canEstimate: () => true, sample() {}, sampleTTFB() {}, update() {}, destroy() {} };
}

export interface SammyAbr extends AbrComponentAPI {
  /** A video chunk arrived: the next read of `nextAutoLevel` decides again. */
  afterChunk(): void;
}

/**
 * The controller class for `new Hls({ abrController })`. `OwnAbr` is hls.js's own
 * controller class (the app's `Hls.DefaultConfig.abrController`); `sammy()` is the
 * playback whose core decides (null: hls.js's own controller does); `onCreate` receives
 * the instance hls.js makes.
 */
export function sammyAbrController(
  OwnAbr: (typeof Hls)['DefaultConfig']['abrController'],
  sammy: () => PlaybackCore | null,
  log: (message: string, err?: unknown) => void,
  onCreate: (abr: SammyAbr) => void,
): new (hls: Hls) => SammyAbr {
  return class SammyAbrController implements SammyAbr {
    private readonly hls: Hls;
    private readonly own: AbrComponentAPI;
    private forced = -1;
    /** The decision for the next chunk; null until the next read. */
    private pending: { index: number; level: number } | null = null;
    private last = 0;

    constructor(hls: Hls) {
      this.hls = hls;
      this.own = new OwnAbr(hls);
      onCreate(this);
    }

    /** The playback, while its core decides. */
    private core(): PlaybackCore | null {
      const live = sammy();
      return live?.session ? live : null;
    }

    get bwEstimator(): AbrComponentAPI['bwEstimator'] {
      const core = this.core();
      return core ? (coreEstimator(core, () => this.hls.config.abrEwmaDefaultEstimate) as unknown as AbrComponentAPI['bwEstimator']) : this.own.bwEstimator;
    }

    get forcedAutoLevel(): number {
      return this.core() ? this.forced : this.own.forcedAutoLevel;
    }

    private rungs(): number[] {
      return levelRungs(this.hls.levels);
    }

    get firstAutoLevel(): number {
      const core = this.core();
      if (!core) return this.own.firstAutoLevel;
      return guarded(log, 'Sammy ABR failed; starting at the lowest level', this.hls.minAutoLevel, () => {
        const d = core.firstDecision();
        return (this.last = levelFor(this.rungs(), d ? d.rung : 0, this.hls.minAutoLevel, this.hls.maxAutoLevel));
      });
    }

    get nextAutoLevel(): number {
      const core = this.core();
      if (!core) return this.own.nextAutoLevel;
      if (this.forced > -1) return this.forced;
      return guarded(log, 'Sammy ABR failed; keeping the level', this.last, () => {
        const index = core.nextVideoIndex();
        if (this.pending?.index === index) return this.pending.level;
        const rungs = this.rungs();
        const d = core.decide(rungs[this.hls.maxAutoLevel] ?? rungs.length - 1);
        if (!d) return this.last;
        this.pending = { index, level: levelFor(rungs, d.rung, this.hls.minAutoLevel, this.hls.maxAutoLevel) };
        return (this.last = this.pending.level);
      });
    }

    /** hls.js forces a level for one fragment (e.g. one below a level that failed to load). */
    set nextAutoLevel(level: number) {
      this.forced = level;
      this.own.nextAutoLevel = level;
    }

    afterChunk(): void {
      this.pending = null;
      this.forced = -1;
    }

    resetEstimator(abrEwmaDefaultEstimate: number): void {
      this.own.resetEstimator(abrEwmaDefaultEstimate);
    }

    destroy(): void {
      this.own.destroy();
    }
  };
}
