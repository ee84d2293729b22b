/**
 * Thin Shaka Player 5 adapter around the Sammy core. It is responsible for:
 *   1. Shaka's configuration per arm: the buffer target, CMCD in headers (version 1,
 *      `rtp` only when the arm keeps Shaka's own), and for `sammy` the Sammy
 *      AbrManager (abr-manager.ts).
 *   2. A request filter, which Shaka runs after its own CMCD step, that hands every
 *      segment request to the playback core (src/browser/playback.ts): it sets or strips `rtp`
 *      in `CMCD-Status` as the arm's policy says.
 *   3. A response filter that hands each video chunk's bytes, Shaka's timing and
 *      Server-Timing to the playback core for its ChunkRecord, then lets the Sammy
 *      AbrManager choose the next chunk's rung.
 * Nothing here throws into Shaka: a failing step logs, and the request or response
 * goes on unchanged.
 */
import shaka from 'shaka-player/dist/shaka-player.dash.js';
import { ARM_REGISTRY } from '../abr/arms/index.js';
import { playerCmcdKeys } from '../browser/cmcd-status.js';
import { headerValue } from '../browser/headers.js';
import { armParam } from '../browser/player-config.js';
import { bufferedAheadS, byteLength, guarded, PlaybackCore, type ChunkRequest, type Playback, type PlaybackOptions } from '../browser/playback.js';
import { SammyAbrManager } from './abr-manager.js';

const { RequestType, AdvancedRequestType } = shaka.net.NetworkingEngine;

/** Shaka's configuration for the arm. */
export function shakaConfig(o: Pick<PlaybackOptions, 'arm' | 'config'>, abrFactory: (() => shaka.extern.AbrManager) | null): Record<string, unknown> {
  const ownRtp = ARM_REGISTRY[o.arm].ownRtp;
  return {
    // Every arm plays to the same buffer target; Shaka fetches while less than this is buffered ahead.
    streaming: { bufferingGoal: o.config.maxBufferS },
    cmcd: {
      enabled: true,
      useHeaders: true,
      version: 1,
      includeKeys: playerCmcdKeys(o.arm),
      ...(ownRtp ? { rtpSafetyFactor: armParam(o.config, ownRtp.safetyFactorParam) } : {}),
    },
    abr: { enabled: true },
    ...(abrFactory ? { abrFactory } : {}),
  };
}

function segmentKind(context: shaka.extern.RequestContext | undefined): 'MediaSegment' | 'InitializationSegment' | null {
  if (context?.type === AdvancedRequestType.MEDIA_SEGMENT) return 'MediaSegment';
  if (context?.type === AdvancedRequestType.INIT_SEGMENT) return 'InitializationSegment';
  return null;
}

export interface ShakaPlayback extends Playback {
  readonly shaka: shaka.Player;
}

export function startPlayback(o: PlaybackOptions): ShakaPlayback {
  shaka.polyfill.installAll();
  const player = new shaka.Player();
  const videoBufferS = () => {
    const info = player.getBufferedInfo();
    return bufferedAheadS(info.video.length > 0 ? info.video : info.total, o.video.currentTime);
  };
  const topKbps = () => Math.max(0, ...player.getVariantTracks().map((t) => (t.videoBandwidth ?? t.bandwidth) / 1000));
  const core = new PlaybackCore(o, 'shaka', videoBufferS, topKbps);
  const abr = core.session ? new SammyAbrManager(core) : null;
  player.configure(shakaConfig(o, abr ? () => abr : null));

  // The chunk each video request stands for, until its response.
  const chunks = new WeakMap<shaka.extern.Request, ChunkRequest>();
  const net = player.getNetworkingEngine()!;
  net.registerRequestFilter((type, request, context) => {
    guarded(core.log, 'request filter failed; request sent as Shaka made it', undefined, () => {
      const kind = segmentKind(context);
      if (type !== RequestType.SEGMENT || kind === null) return;
      const stream = context?.stream;
      const { headers, chunk } = core.onRequest(
        { url: request.uris[0]!, mediaType: stream?.type ?? '', type: kind, rung: Number(stream?.originalId), bitrateKbps: stream?.bandwidth ? stream.bandwidth / 1000 : null },
        request.headers,
      );
      request.headers = headers ?? {};
      if (chunk) chunks.set(request, chunk);
    });
  });
  net.registerResponseFilter((type, response) => {
    guarded(core.log, 'response filter failed; chunk not recorded', undefined, () => {
      const chunk = type === RequestType.SEGMENT ? chunks.get(response.originalRequest) : undefined;
      if (!chunk) return;
      chunks.delete(response.originalRequest);
      core.onResponse(chunk, {
        status: response.status ?? 200,
        sizeBytes: byteLength(response.data),
        playerDownloadMs: response.timeMs ?? null,
        serverTiming: headerValue(response.headers, 'server-timing'),
      });
      abr?.afterChunk();
    });
  });

  core.start();
  void player
    .attach(o.video)
    .then(() => player.load(o.manifestUrl))
    .then(() => o.video.play())
    .catch((err: unknown) => core.log('Shaka could not start playback', err));
  return { ...core.playback(() => void player.destroy()), shaka: player };
}
