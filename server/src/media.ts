// /media/: the ladder (DASH manifest, HLS playlists, fMP4 segments). Every response passes the pacing controller (onSend),
// which caps the socket before the first body byte.
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { extname } from 'node:path';
import type { BodySender } from './body-sender.js';
import type { ServerMetrics } from './metrics.js';
import { isHttp2Request } from './http2-pacing.js';
import type { PacingController } from './pacing.js';
import { socketFd } from './socket.js';
import { pathAfter, sendFromDir } from './static-files.js';

export const MEDIA_PREFIX = '/media/';

/**
 * Content types DASH and HLS players and MSE expect; `mime` would say
 * video/iso.segment for .m4s. RFC 8216 4: playlists are application/vnd.apple.mpegurl.
 */
export const MEDIA_CONTENT_TYPES: Record<string, string> = {
  '.mpd': 'application/dash+xml',
  '.m3u8': 'application/vnd.apple.mpegurl',
  '.m4s': 'video/mp4',
  '.mp4': 'video/mp4',
  '.m4a': 'audio/mp4',
  '.json': 'application/json',
};

/**
 * Segments never change under a name while a session plays them; manifests and the
 * sidecar are revalidated (cheap with the ETag) so a re-encoded ladder is seen.
 */
export function mediaCacheControl(path: string): string {
  const ext = extname(path).toLowerCase();
  return ext === '.m4s' || ext === '.mp4' || ext === '.m4a' ? 'public, max-age=3600' : 'no-cache';
}

function setMediaHeaders(reply: FastifyReply, filePath: string): void {
  const type = MEDIA_CONTENT_TYPES[extname(filePath).toLowerCase()];
  if (type !== undefined) reply.header('content-type', type);
  reply.header('cache-control', mediaCacheControl(filePath));
}

export interface MediaPluginOptions {
  mediaDir: string;
  pacing: PacingController;
  metrics: ServerMetrics;
  /** The zero-copy path's sender thread; null: every body streams. */
  sender: BodySender | null;
}

/** Whether the kernel can send this request's body: a running sender and a plain TCP socket (TLS is encrypted in user space). */
function zeroCopyFor(request: FastifyRequest, sender: BodySender | null): boolean {
  const socket = request.raw.socket as FastifyRequest['raw']['socket'] & { encrypted?: boolean };
  return sender !== null && sender.available && socket.encrypted !== true && socketFd(socket) !== null;
}

export const mediaPlugin: FastifyPluginAsync<MediaPluginOptions> = async (app, { mediaDir, pacing, metrics, sender }) => {
  app.addHook('onSend', (request, reply, payload, done) => {
    // HTTP/2 streams are paced per connection, by the app's own hook (src/http2-pacing.ts).
    if (isHttp2Request(request)) return done(null, payload);
    let body: unknown = payload;
    try {
      body = pacing.onSend(request, reply, payload);
    } catch (err) {
      // A pacing fault must never cost the client its segment: send it unpaced.
      metrics.errors.inc({ kind: 'server' });
      request.log.error({ err }, 'pacing failed; sending unpaced');
    }
    done(null, body);
  });
  app.get(`${MEDIA_PREFIX}*`, (request, reply) =>
    sendFromDir(request, reply, {
      root: mediaDir,
      urlPath: pathAfter(request.url, MEDIA_PREFIX),
      headers: setMediaHeaders,
      metrics,
      zeroCopy: zeroCopyFor(request, sender),
    }),
  );
};
