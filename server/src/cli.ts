// Stand-in static server until the pacing server lands (issue 3): serves --media under /media/.
import Fastify from 'fastify';
import fastifyStatic from '@fastify/static';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: { media: { type: 'string' }, port: { type: 'string', default: '8080' }, host: { type: 'string', default: '127.0.0.1' } },
});
if (!values.media) {
  console.error('usage: npm run serve -- --media DIR [--port 8080] [--host 127.0.0.1]');
  process.exit(2);
}
const app = Fastify({ logger: true });
await app.register(fastifyStatic, { root: resolve(values.media), prefix: '/media/' });
app.get('/', async (_req, reply) => reply.type('text/plain').send('Sammy: the DASH ladder is at /media/manifest.mpd\n'));
await app.listen({ port: Number(values.port), host: values.host });
