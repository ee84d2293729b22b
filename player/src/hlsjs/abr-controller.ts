/**
 * The Sammy bitrate choice as an hls.js ABR controller (the `abrController` config
 * class). hls.js reads `firstAutoLevel` for the first fragment and `nextAutoLevel` on
 * every tick of its stream controller before it picks the next fragment, whether or
 * not it will load one; so the controller asks the playback core once per video chunk
 * (the first read after the previous chunk arrived) and answers every later read with
 * that decision, so the core's stability rule sees one decision per chunk. The next
 * request leaves at once unless the buffer is full, so that decision is taken at the
 * buffer the request will see or, at a full buffer, a little more. The rtp is computed
 * per request, at the request's own buffer (loader.ts).
 *
 * Levels are mapped to rungs through their playlist names (`media-<id>.m3u8`, the
 * encoder's Representation ids); hls.js's own caps (`autoLevelCapping`, ...) set the
 * highest allowed level. Any failure keeps the last level and logs.
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
function estimatorOf(core: PlaybackCore, defaultBps: () => number) {
  const bps = () => {
    const kbps = core.session?.estimate().kbps ?? null;
    return kbps === null ? defaultBps() : kbps * 1000;
  };
  return { getEstimate: bps, getEstimateTTFB: () => 0, get defaultEstimate() { return defaultBps(); }, canEstimate: () => true, sample() {}, sampleTTFB() {}, update() {}, destroy() {} };
}

export interface SammyAbr extends AbrComponentAPI {
  /** A video chunk arrived: the next read of `nextAutoLevel` decides again. */
  afterChunk(): void;
}

/** The controller class for `new Hls({ abrController })`, bound to this playback's core; `onCreate` receives the instance. */
export function sammyAbrController(core: PlaybackCore, onCreate: (abr: SammyAbr) => void) {
  return class SammyAbrController implements SammyAbr {
    forcedAutoLevel = -1;
    private readonly hls: Hls;
    /** The decision for the next chunk; null until the next read. */
    private pending: { index: number; level: number } | null = null;
    private last = 0;
    readonly bwEstimator;

    constructor(hls: Hls) {
      this.hls = hls;
      this.bwEstimator = estimatorOf(core, () => hls.config.abrEwmaDefaultEstimate) as unknown as AbrComponentAPI['bwEstimator'];
      onCreate(this);
    }

    private rungs(): number[] {
      return levelRungs(this.hls.levels);
    }

    get firstAutoLevel(): number {
      return guarded(core.log, 'Sammy ABR failed; starting at the lowest level', this.hls.minAutoLevel, () => {
        const d = core.firstDecision();
        return (this.last = levelFor(this.rungs(), d ? d.rung : 0, this.hls.minAutoLevel, this.hls.maxAutoLevel));
      });
    }

    get nextAutoLevel(): number {
      if (this.forcedAutoLevel > -1) return this.forcedAutoLevel;
      return guarded(core.log, 'Sammy ABR failed; keeping the level', this.last, () => {
        const index = core.nextVideoIndex();
        if (this.pending?.index === index) return this.pending.level;
        const rungs = this.rungs();
        const { rung } = core.decide(rungs[this.hls.maxAutoLevel] ?? rungs.length - 1);
        this.pending = { index, level: levelFor(rungs, rung, this.hls.minAutoLevel, this.hls.maxAutoLevel) };
        return (this.last = this.pending.level);
      });
    }

    /** hls.js forces a level for one fragment (e.g. one below a level that failed to load). */
    set nextAutoLevel(level: number) {
      this.forcedAutoLevel = level;
    }

    afterChunk(): void {
      this.pending = null;
      this.forcedAutoLevel = -1;
    }

    resetEstimator(): void {}
    destroy(): void {}
  };
}
