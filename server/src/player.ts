// /: the built player page (player/dist, `npm run build -w @sammy/player`), or a
// short page saying how to build it.
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ServerMetrics } from './metrics.js';
import { pathAfter, sendFromDir } from './static-files.js';

export const NOT_BUILT_PAGE = `<!doctype html>
<meta charset="utf-8"><title>Sammy</title>
<h1>Sammy</h1>
<p>The player page is not built. Run <code>npm run build</code> in the repository (or
<code>npm run build -w @sammy/player</code>), then reload.</p>
<p>The media is served at <a href="/media/manifest.mpd">/media/manifest.mpd</a>.</p>
`;

/** The page and its bundle change with every build: always revalidate. */
function noCache(reply: FastifyReply): void {
  reply.header('cache-control', 'no-cache');
}

export const playerPlugin: FastifyPluginAsync<{ playerDir: string; metrics: ServerMetrics }> = async (app, { playerDir, metrics }) => {
  const indexFile = join(playerDir, 'index.html');
  if (!existsSync(indexFile)) app.log.info({ playerDir }, 'player not built: / explains how to build it');
  // Checked per request: the page may be built while the server runs.
  app.get('/', (request, reply) => {
    if (existsSync(indexFile)) return sendFromDir(request, reply, { root: playerDir, urlPath: '/index.html', headers: noCache, metrics });
    return reply.type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(NOT_BUILT_PAGE);
  });
  app.get('/*', (request, reply) => sendFromDir(request, reply, { root: playerDir, urlPath: pathAfter(request.url, '/'), headers: noCache, metrics }));
};
