/**
 * Thin hls.js adapter around the Sammy core. It is responsible for:
 *   1. hls.js's configuration per arm: the buffer target, CMCD in headers (version 1,
 *      `rtp` only when the arm keeps hls.js's own), and for `sammy` the Sammy ABR
 *      controller (abr-controller.ts).
 *   2. A fragment loader around hls.js's own, which hls.js's CMCD step wraps in turn,
 *      so it runs after that step: it hands every fragment request (init and media,
 *      video and audio) to the playback core (src/browser/playback.ts), which sets or strips
 *      `rtp` in `CMCD-Status` as the arm's policy says, and hands each video chunk's
 *      bytes, hls.js's timing and Server-Timing back to it for its ChunkRecord.
 * Nothing here throws into hls.js: a failing step logs, and the request or response
 * goes on unchanged.
 */
import Hls from 'hls.js';
import type { FragmentLoaderConstructor, FragmentLoaderContext, HlsConfig, Loader, LoaderCallbacks, LoaderConfiguration } from 'hls.js';
import { ARM_REGISTRY } from '../abr/arms/index.js';
import { playerCmcdKeys } from '../browser/cmcd-status.js';
import { armParam } from '../browser/player-config.js';
import { byteLength, guarded, PlaybackCore, type Playback, type PlaybackOptions } from '../browser/playback.js';
import { levelRungs, sammyAbrController, type SammyAbr } from './abr-controller.js';

/** hls.js's configuration for the arm. */
export function hlsjsConfig(o: Pick<PlaybackOptions, 'arm' | 'config'>): Partial<HlsConfig> {
  const ownRtp = ARM_REGISTRY[o.arm].ownRtp;
  return {
    // Every arm plays to the same buffer target (hls.js grows maxBufferLength up to maxMaxBufferLength).
    maxBufferLength: o.config.maxBufferS,
    maxMaxBufferLength: o.config.maxBufferS,
    cmcd: {
      useHeaders: true,
      version: 1,
      includeKeys: playerCmcdKeys(o.arm) as NonNullable<HlsConfig['cmcd']>['includeKeys'],
      ...(ownRtp ? { rtpSafetyFactor: armParam(o.config, ownRtp.safetyFactorParam) } : {}),
    },
  };
}

/** The fragment loader: hls.js's own loader, with the playback core on each request and response. */
function sammyFragmentLoader(core: PlaybackCore, Base: HlsConfig['loader'], levels: () => number[], afterChunk: () => void): FragmentLoaderConstructor {
  return class SammyFragmentLoader extends (Base as unknown as new (config: HlsConfig) => Loader<FragmentLoaderContext>) {
    override load(context: FragmentLoaderContext, config: LoaderConfiguration, callbacks: LoaderCallbacks<FragmentLoaderContext>): void {
      const chunk = guarded(core.log, 'fragment loader failed; request sent as hls.js made it', null, () => {
        const { frag } = context;
        const rung = levels()[frag.level] ?? null;
        const { headers, chunk } = core.onRequest(
          { url: context.url, mediaType: frag.type === 'main' ? 'video' : 'audio', type: frag.sn === 'initSegment' ? 'InitializationSegment' : 'MediaSegment', rung },
          context.headers,
        );
        if (headers) context.headers = headers;
        return chunk;
      });
      if (!chunk) return super.load(context, config, callbacks);
      super.load(context, config, {
        ...callbacks,
        onSuccess: (response, stats, ctx, networkDetails) => {
          guarded(core.log, 'fragment loader failed; chunk not recorded', undefined, () => {
            core.onResponse(chunk, {
              status: response.code ?? 200,
              sizeBytes: byteLength(response.data),
              playerDownloadMs: stats.loading.end - stats.loading.start,
              serverTiming: networkDetails instanceof XMLHttpRequest ? networkDetails.getResponseHeader('server-timing') : null,
            });
            afterChunk();
          });
          callbacks.onSuccess(response, stats, ctx, networkDetails);
        },
      });
    }
  } as unknown as FragmentLoaderConstructor;
}

export interface HlsjsPlayback extends Playback {
  readonly hls: Hls;
}

export function startPlayback(o: PlaybackOptions): HlsjsPlayback {
  let hls: Hls | null = null;
  let abr: SammyAbr | null = null;
  const videoBufferS = () => hls?.mainForwardBufferInfo?.len ?? 0;
  const topKbps = () => Math.max(0, ...(hls?.levels ?? []).map((l) => l.bitrate / 1000));
  const core = new PlaybackCore(o, 'hlsjs', videoBufferS, topKbps);
  const levels = () => levelRungs(hls?.levels ?? []);
  hls = new Hls({
    ...hlsjsConfig(o),
    fLoader: sammyFragmentLoader(core, Hls.DefaultConfig.loader, levels, () => abr?.afterChunk()),
    ...(core.session ? { abrController: sammyAbrController(core, (a) => void (abr = a)) as unknown as HlsConfig['abrController'] } : {}),
  });
  hls.on(Hls.Events.ERROR, (_event, data) => {
    if (data.fatal) core.log(`hls.js fatal error: ${data.type} ${data.details}`);
  });
  core.start();
  hls.attachMedia(o.video);
  hls.loadSource(o.manifestUrl);
  const started = hls;
  void o.video.play().catch(() => {});
  return { ...core.playback(() => started.destroy()), hls: started };
}
