/**
 * One headless player session: the simulator's control model of the arm
 * (`@sammy/sim/arms`: the Sammy core itself for `sammy`, the dash.js 5 default-ABR model
 * for `control` and `fixed4x`) makes every decision; real HTTP requests over the
 * network carry the browser player's CMCD headers; playback runs in real time
 * (`playback.ts`); the result is the browser's `SessionQoE`, summarised by the core's
 * own `summarizeSession`. Nothing here decides a rung or a rate.
 *
 * Per request, as the simulator (`sim/src/session.ts`) and dash.js's ScheduleController do:
 * wait while buffer + one segment is above the arm's buffer target, ask the arm,
 * wait its delay (BOLA), fetch the init segment of a rung not fetched yet, fetch the
 * segment, report progress every 100 ms (dash.js's AbandonRequestsRule may give the
 * download up for another rung), and report the finished chunk. Audio is fetched
 * beside the video to the same buffer target; playback needs both.
 *
 * Why this loop and the simulator's are two: what they share is every decision (the
 * same `ArmPolicy` object makes them) and the request schedule (`waitBeforeRequestS`).
 * What is left differs in kind, not in detail. The simulator's time is a number it
 * moves forward: a download's end is computed from the trace in one step, abandonment
 * by looking at the trace at each progress step, and the whole session is synchronous,
 * so a sweep runs hundreds of ten-minute sessions a minute. Here time passes: a download is a
 * socket whose bytes arrive when the network delivers them, progress is an event,
 * the audio loop runs beside the video one, init segments and the page are fetched,
 * and a fetch can fail. One loop behind a clock and a transport would make the
 * simulator asynchronous (a promise per step of every simulated chunk) or this one
 * pretend a socket's end is known in advance.
 */
import { randomUUID } from 'node:crypto';
import { Agent } from 'node:http';
import { parseSegmentsSidecar, type SegmentsSidecar } from '@sammy/encoder/sidecar';
import { pickSammyConfig, resolveSammyConfig, summarizeSession, type ChunkRecord, type KeyValueStore, type Phase, type SammyConfig, type SessionQoE } from '@sammy/player/abr';
import { armFactory, waitBeforeRequestS, type ArmPolicy, type SimArm } from '@sammy/sim/arms';
import { cmcdHeaders } from './cmcd.js';
import { FetchError, fetchTimed, type FetchResult } from './http.js';
import { initUrl, parseLayout, segmentUrl, type SegmentLayout } from './layout.js';
import type { SessionResult } from '../analysis/records.js';
import { PlaybackModel } from './playback.js';

/** What a device keeps between sessions (a browser keeps both in localStorage). */
export interface DeviceState {
  /** The Sammy core's initial-phase history lives in this store. */
  store: KeyValueStore;
  /** dash.js's saved-bitrate cache (lastBitrateCachingInfo): the control model's start. */
  dashjsSavedKbps: number | null;
}

export interface HeadlessOptions {
  /** The server's origin, e.g. http://10.77.1.2:8080; the ladder is at /media/. */
  baseUrl: string;
  arm: SimArm;
  /** The buffer target and Sammy-config overrides (the page's `&config=`). */
  config: Partial<SammyConfig>;
  device: DeviceState;
  /** Buffer sampling period (default 500 ms, as the browser session samples). */
  sampleMs?: number;
  /** Give up when no frame shows within this. */
  startupTimeoutS: number;
  /** Fetch the player page and its assets first, as a browser does (default true). */
  loadPage?: boolean;
  now?: () => number;
}

/** The same-origin scripts and stylesheets a page names (`<script src>`, `<link rel="stylesheet" href>`). */
export function pageAssets(html: string): string[] {
  const out: string[] = [];
  for (const m of html.matchAll(/<script\b[^>]*\ssrc="([^"]+)"/g)) out.push(m[1]!);
  for (const m of html.matchAll(/<link\b[^>]*rel="stylesheet"[^>]*\shref="([^"]+)"/g)) out.push(m[1]!);
  return out.filter((u) => !/^[a-z]+:/i.test(u));
}

/** A session's record (`SessionResult`, src/analysis/records.ts), with what only the headless player knows. */
export interface HeadlessResult extends Omit<SessionResult, 'arm' | 'storageState'> {
  arm: SimArm;
  /** The local ports of the session's connections (the server's telemetry names the client's port). */
  localPorts: number[];
  /** Bytes fetched and then abandoned (dash.js's AbandonRequestsRule). */
  abandonedBytes: number;
}

const PROGRESS_MS = 100;

function sleepUnless(ms: number, stopped: () => boolean, wake: { fn: (() => void) | null }): Promise<void> {
  if (ms <= 0 || stopped()) return Promise.resolve();
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      wake.fn = null;
      resolve();
    }
    wake.fn = done;
  });
}

/** The config the arm runs with: the core's fields of `config`, with its buffer target (every arm's). */
function armConfig(config: Partial<SammyConfig>): SammyConfig {
  return pickSammyConfig(resolveSammyConfig(config));
}

export class HeadlessSession {
  /**
   * The play request (ms since the epoch): once the page and its assets have loaded, as
   * the demo page counts from its player's arrival (a site ships its player with the page).
   */
  private origin: number;
  /** Resolves with the play request's time once it is made; rejects if the page does not load. */
  readonly started: Promise<number>;
  private resolveStarted!: (ms: number) => void;
  private rejectStarted!: (err: Error) => void;
  readonly playbackStart: Promise<number>;
  private resolveStart!: (ms: number) => void;
  private rejectStart!: (err: Error) => void;
  private readonly now: () => number;
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 6 });
  private readonly sessionId = randomUUID();
  private readonly ports = new Set<number>();
  private readonly aborts = new Set<() => void>();
  private readonly wakes = new Set<{ fn: (() => void) | null }>();
  private readonly buffer: Array<[number, number, number]> = [];
  private readonly chunks: ChunkRecord[] = [];
  private readonly errors: string[] = [];
  private stopped = false;
  private policy: ArmPolicy | null = null;
  private playback: PlaybackModel | null = null;
  private sidecar: SegmentsSidecar | null = null;
  private config: SammyConfig;
  private videoEndS = 0;
  private audioEndS = 0;
  private hasAudio = false;
  private lastRtpKbps: number | null = null;
  private lastDeclaredFloorKbps: number | null = null;
  private lastThroughputKbps: number | null = null;
  private starvedSinceRequest = false;
  private abandonedBytes = 0;
  private playbackStartMs: number | null = null;
  private readonly loops: Promise<void>;
  private sampler: NodeJS.Timeout | null = null;

  constructor(private readonly o: HeadlessOptions) {
    this.now = o.now ?? (() => performance.timeOrigin + performance.now());
    this.origin = this.now();
    this.config = armConfig(o.config);
    this.started = new Promise<number>((resolve, reject) => {
      this.resolveStarted = resolve;
      this.rejectStarted = reject;
    });
    this.started.catch(() => {});
    this.playbackStart = new Promise<number>((resolve, reject) => {
      this.resolveStart = resolve;
      this.rejectStart = reject;
    });
    this.playbackStart.catch(() => {});
    const timeout = setTimeout(() => {
      const err = new Error(`no frame within ${o.startupTimeoutS} s`);
      this.rejectStarted(err);
      this.rejectStart(err);
    }, o.startupTimeoutS * 1000);
    this.playbackStart.then(() => clearTimeout(timeout), () => clearTimeout(timeout));
    this.loops = this.run().catch((err: Error) => {
      if (!(err instanceof FetchError && err.code === 'HEADLESS_ABORTED' && this.stopped)) this.errors.push(err.message);
      this.rejectStarted(err);
      this.rejectStart(err);
    });
  }

  /** The play request (ms since the epoch); see `started`. */
  get originMs(): number {
    return this.origin;
  }

  /** Seconds since the play request. */
  private t(): number {
    return (this.now() - this.originMs) / 1000;
  }

  private fetch(url: string, headers: Record<string, string>, extra: { keepBody?: boolean; onProgress?: (loaded: number, sinceFirstByteMs: number) => boolean } = {}): Promise<FetchResult> {
    const f = fetchTimed(url, { agent: this.agent, headers, now: this.now, progressMs: PROGRESS_MS, ...extra });
    this.aborts.add(f.abort);
    return f.done.then(
      (r) => {
        this.aborts.delete(f.abort);
        if (r.localPort) this.ports.add(r.localPort);
        return r;
      },
      (err) => {
        this.aborts.delete(f.abort);
        throw err;
      },
    );
  }

  private sleep(s: number): Promise<void> {
    const wake = { fn: null as (() => void) | null };
    this.wakes.add(wake);
    return sleepUnless(s * 1000, () => this.stopped, wake).then(() => void this.wakes.delete(wake));
  }

  /**
   * What the browser fetches before its player asks for the manifest: the page and the
   * scripts and stylesheets it names (the lab's browser sessions start from an empty
   * cache, so each one loads them over the link). Skipped when the server has no page.
   */
  private async loadPage(): Promise<void> {
    let page: FetchResult;
    try {
      page = await this.fetch(`${this.o.baseUrl}/`, {}, { keepBody: true });
    } catch (err) {
      if (err instanceof FetchError && err.code === 'HEADLESS_HTTP') return;
      throw err;
    }
    await Promise.all(pageAssets(page.body!.toString('utf8')).map((path) => this.fetch(new URL(path, `${this.o.baseUrl}/`).href, {})));
  }

  private async run(): Promise<void> {
    if (this.o.loadPage !== false) await this.loadPage();
    this.origin = this.now();
    this.resolveStarted(this.origin);
    const mpdUrl = `${this.o.baseUrl}/media/manifest.mpd`;
    const base = { sessionId: this.sessionId, startup: true, starved: false, rtpKbps: null };
    const [mpd, side] = await Promise.all([
      this.fetch(mpdUrl, cmcdHeaders({ ...base, objectType: 'm' }), { keepBody: true }),
      this.fetch(`${this.o.baseUrl}/media/segments.json`, cmcdHeaders({ ...base, objectType: 'o' }), { keepBody: true }),
    ]);
    const layout = parseLayout(mpd.body!.toString('utf8'), mpdUrl);
    const sidecar = (this.sidecar = parseSegmentsSidecar(JSON.parse(side.body!.toString('utf8'))));
    const segS = sidecar.segmentDurationS;
    const count = Math.min(...sidecar.representations.map((r) => r.segmentSizesBytes.length));
    const contentS = count * segS;
    const factory = armFactory(this.o.arm, {
      maxBufferS: this.config.maxBufferS,
      sammy: this.config,
      historyStore: this.o.device.store,
      dashjs: { savedBitrateKbps: this.o.device.dashjsSavedKbps },
    });
    const policy = (this.policy = factory(sidecar, contentS));
    this.playback = new PlaybackModel(segS, contentS, {
      stall: (atS) => {
        this.starvedSinceRequest = true;
        policy.onStall?.(atS);
      },
    });
    this.hasAudio = sidecar.audio !== undefined;
    this.sampler = setInterval(() => this.sample(), this.o.sampleMs ?? 500);
    await Promise.all([this.videoLoop(layout, sidecar, policy, count), this.hasAudio ? this.audioLoop(layout, sidecar, count) : Promise.resolve()]);
  }

  private sample(): void {
    if (!this.playback || this.stopped) return;
    const t = this.t();
    this.buffer.push([Math.round(t * 1000) / 1000, this.playback.bufferS(t), this.playback.playheadS(t)]);
  }

  /** Both media buffered: playback may start or resume. */
  private appended(): void {
    const pb = this.playback!;
    const end = this.hasAudio ? Math.min(this.videoEndS, this.audioEndS) : this.videoEndS;
    const t = this.t();
    if (pb.buffered(end, t) === 'started') {
      this.playbackStartMs = this.originMs + t * 1000;
      this.policy!.onPlaybackStart?.(t);
      this.resolveStart(this.playbackStartMs);
    }
  }

  private videoBufferS(t: number): number {
    const head = this.playback!.playheadS(t);
    return Math.max(0, this.videoEndS - head);
  }

  private async videoLoop(layout: SegmentLayout, sidecar: SegmentsSidecar, policy: ArmPolicy, count: number): Promise<void> {
    const reps = sidecar.representations;
    const segS = sidecar.segmentDurationS;
    const topKbps = reps[reps.length - 1]!.bitrateKbps;
    const initDone = new Set<number>();
    let lastRung = -1;
    for (let index = 0; index < count && !this.stopped; index++) {
      const pb = this.playback!;
      if (pb.started && lastRung >= 0) {
        const fullS = waitBeforeRequestS(policy, lastRung, this.videoBufferS(this.t()), segS);
        if (fullS > 0) await this.sleep(fullS);
      }
      if (this.stopped) return;
      let t = this.t();
      const decision = policy.decide({ nowS: t, index, bufferS: this.videoBufferS(t), started: pb.started, stalled: pb.stalled });
      if (decision.delayS && decision.delayS > 0) await this.sleep(decision.delayS);
      if (this.stopped) return;
      let rung = decision.rung;
      const phase: Phase = decision.phase ?? (pb.started ? 'playing' : 'initial');
      this.lastRtpKbps = decision.rtpKbps;
      this.lastDeclaredFloorKbps = decision.declaredFloorKbps ?? null;
      t = this.t();
      const bufferBeforeS = this.videoBufferS(t);
      const headers = (objectType: 'v' | 'i', r: number) =>
        cmcdHeaders({
          sessionId: this.sessionId, objectType, bitrateKbps: reps[r]!.bitrateKbps, topBitrateKbps: topKbps, durationMs: objectType === 'v' ? segS * 1000 : undefined,
          bufferMs: this.videoBufferS(this.t()) * 1000, measuredKbps: this.lastThroughputKbps, startup: !pb.started || pb.stalled, starved: this.takeStarved(), rtpKbps: decision.rtpKbps, declaredFloorKbps: decision.declaredFloorKbps,
          ...(objectType === 'v' && index + 1 < count ? { nextObject: segmentUrl(layout, reps[r]!.id, index + 1).split('/').pop()! } : {}),
        });
      if (!initDone.has(rung)) {
        await this.fetch(initUrl(layout, reps[rung]!.id), headers('i', rung));
        initDone.add(rung);
      }
      const requestS = this.t();
      let result: FetchResult;
      let measuredFromS = requestS;
      let chunkAbandonedBytes = 0;
      try {
        result = await this.fetch(segmentUrl(layout, reps[rung]!.id, index), headers('v', rung), {
          onProgress: policy.onProgress
            ? (loadedBytes, sinceFirstByteMs) => {
                const nowS = this.t();
                const next = policy.onProgress!({ index, rung, sizeBytes: reps[rung]!.segmentSizesBytes[index]!, loadedBytes, sinceFirstByteS: sinceFirstByteMs / 1000, sinceRequestS: nowS - requestS, nowS, bufferS: this.videoBufferS(nowS) });
                if (next === null || next === rung) return false;
                rung = next;
                return true;
              }
            : undefined,
        });
      } catch (err) {
        if (!(err instanceof FetchError) || err.code !== 'HEADLESS_ABORTED' || this.stopped) throw err;
        // Abandoned for `rung`: fetch the same segment there (dash.js, once per segment).
        this.abandonedBytes += err.loadedBytes;
        chunkAbandonedBytes = err.loadedBytes;
        if (!initDone.has(rung)) {
          await this.fetch(initUrl(layout, reps[rung]!.id), headers('i', rung));
          initDone.add(rung);
        }
        measuredFromS = this.t();
        result = await this.fetch(segmentUrl(layout, reps[rung]!.id, index), headers('v', rung));
      }
      const endS = (result.endMs - this.originMs) / 1000;
      const firstByteS = (result.firstByteMs - this.originMs) / 1000;
      const downloadS = Math.max(1e-6, endS - measuredFromS);
      const bufferAtEndS = this.videoBufferS(endS);
      this.videoEndS = (index + 1) * segS;
      const record: ChunkRecord = {
        index, rung, bitrateKbps: reps[rung]!.bitrateKbps, sizeBytes: result.bytes, downloadS, throughputKbps: (result.bytes * 8) / 1000 / downloadS,
        phase, rtpKbps: decision.rtpKbps, appliedRateKbps: result.appliedRateKbps, bufferBeforeS, bufferAfterS: bufferAtEndS + segS, requestS,
        ...(chunkAbandonedBytes > 0 ? { abandonedBytes: chunkAbandonedBytes } : {}),
      };
      this.chunks.push(record);
      this.lastThroughputKbps = record.throughputKbps;
      policy.onChunk({ index, rung, sizeBytes: result.bytes, durationS: segS, phase, rtpKbps: decision.rtpKbps, requestS: measuredFromS, firstByteS, endS, bufferAtEndS, bufferAfterS: bufferAtEndS + segS });
      lastRung = rung;
      this.appended();
    }
  }

  private takeStarved(): boolean {
    const s = this.starvedSinceRequest;
    this.starvedSinceRequest = false;
    return s;
  }

  /** Audio to the same buffer target; its requests carry the video's latest rtp, as the browser's interceptor sets it on every segment. */
  private async audioLoop(layout: SegmentLayout, sidecar: SegmentsSidecar, count: number): Promise<void> {
    const audio = sidecar.audio!;
    const segS = sidecar.segmentDurationS;
    const targetS = this.config.maxBufferS;
    const headers = (objectType: 'a' | 'i', index: number) =>
      cmcdHeaders({
        sessionId: this.sessionId, objectType, bitrateKbps: audio.bitrateKbps, topBitrateKbps: audio.bitrateKbps, durationMs: objectType === 'a' ? segS * 1000 : undefined,
        bufferMs: Math.max(0, this.audioEndS - this.playback!.playheadS(this.t())) * 1000, startup: !this.playback!.started, starved: false, rtpKbps: this.lastRtpKbps, declaredFloorKbps: this.lastDeclaredFloorKbps,
        ...(objectType === 'a' && index + 1 < count ? { nextObject: segmentUrl(layout, audio.id, index + 1).split('/').pop()! } : {}),
      });
    await this.fetch(initUrl(layout, audio.id), headers('i', 0));
    for (let index = 0; index < count && !this.stopped; index++) {
      if (this.playback!.started) {
        const aheadS = Math.max(0, this.audioEndS - this.playback!.playheadS(this.t()));
        const fullS = aheadS + (targetS <= segS ? 0 : segS) - targetS;
        if (fullS > 0) await this.sleep(fullS);
      }
      if (this.stopped) return;
      await this.fetch(segmentUrl(layout, audio.id, index), headers('a', index));
      this.audioEndS = (index + 1) * segS;
      this.appended();
    }
  }

  /** Ends the session now: aborts what is in flight and returns its record. */
  async finish(): Promise<HeadlessResult> {
    const t = this.t();
    this.stopped = true;
    if (this.sampler) clearInterval(this.sampler);
    for (const w of this.wakes) w.fn?.();
    for (const a of [...this.aborts]) a();
    await this.loops;
    this.agent.destroy();
    const pb = this.playback;
    const policy = this.policy;
    let qoe: SessionQoE | null = null;
    if (pb && policy && this.sidecar) {
      const summary = summarizeSession({
        arm: this.o.arm as SessionQoE['arm'],
        config: { ...policy.config, maxBufferS: this.config.maxBufferS, player: 'headless' },
        chunks: this.chunks,
        segmentDurationS: this.sidecar.segmentDurationS,
        ssim: this.sidecar.representations.map((r) => r.ssim),
        playDelayS: pb.playDelayS,
        rebufferCount: pb.rebufferCount,
        rebufferS: pb.rebufferS(t),
        playedRanges: [[0, pb.playheadS(t)]],
      });
      qoe = summary;
    }
    const saved = (policy as { savedBitrateKbps?: () => number | null } | null)?.savedBitrateKbps?.();
    if (saved !== undefined && saved !== null) this.o.device.dashjsSavedKbps = saved;
    return {
      arm: this.o.arm, url: `${this.o.baseUrl}/media/manifest.mpd`, originMs: this.originMs, playbackStartMs: this.playbackStartMs, qoe,
      playerConfig: policy ? { ...policy.config, maxBufferS: this.config.maxBufferS, player: 'headless' } : null,
      buffer: this.buffer, pageErrors: this.errors, localPorts: [...this.ports], abandonedBytes: this.abandonedBytes,
    };
  }
}
