// Node's own floor for the CPU section (bench/cpu.ts): a bare server answering the
// section's requests for its files from memory, with no file system call, no range or
// conditional logic, no telemetry and no metrics. A request with a CMCD `rtp` caps its
// connection with SO_MAX_PACING_RATE (the server's own binding, src/socket.ts) and
// leaves the kernel to make the trains, as `--burst-mode kernel` does; the cap is set
// once per connection, since the section's clients ask every request on a connection
// for the same rate.
//
// Two frameworks answer the same way: `node` is node:http alone, `fastify` is a bare
// fastify instance (no logger, no plugins, one route) on top of it, as the server
// uses. What the server's rows cost beyond the fastify floor is the server's own
// work per response; what the fastify floor costs beyond the node:http one is the
// framework's; what node:http costs beyond nginx is Node's.
//
//   node --import tsx bench/node-floor.ts MEDIA_DIR HOST [node|fastify]
//
// Prints `listening on http://HOST:PORT` (the server's contract line, so the bench
// starts it with startServer) and exits on SIGTERM.
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import Fastify from 'fastify';
import { loadSocketControl, socketFd } from '../src/socket.js';

/** The third argument (a type only: importing this script would start a server). */
export type FloorFramework = 'node' | 'fastify';
const FLOOR_FRAMEWORKS: readonly FloorFramework[] = ['node', 'fastify'];

const [mediaDir, host, framework = 'node'] = process.argv.slice(2);
if (!mediaDir || !host || !FLOOR_FRAMEWORKS.includes(framework as FloorFramework)) {
  console.error(`usage: node --import tsx bench/node-floor.ts MEDIA_DIR HOST [${FLOOR_FRAMEWORKS.join('|')}]`);
  process.exit(2);
}

const bodies = new Map<string, Buffer>(
  readdirSync(mediaDir)
    .filter((name) => name.endsWith('.m4s'))
    .map((name) => [`/media/${name}`, readFileSync(join(mediaDir, name))] as const),
);
const control = loadSocketControl();
const paced = new WeakSet<Socket>();
const RTP = /(?:^|,)\s*rtp=(\d+)/;
const HEADERS = { 'content-type': 'video/mp4' };

/** The body a request gets (undefined: 404), after capping its connection if it asks for a pace. */
function answer(method: string | undefined, url: string | undefined, cmcdStatus: unknown, socket: Socket): Buffer | undefined {
  const body = method === 'GET' ? bodies.get(url ?? '') : undefined;
  if (body === undefined) return undefined;
  const rtp = RTP.exec(String(cmcdStatus ?? ''));
  if (rtp && !paced.has(socket)) {
    const fd = socketFd(socket);
    if (fd !== null && control.setMaxPacingRate(fd, BigInt(Number(rtp[1]) * 125)).ok) paced.add(socket);
  }
  return body;
}

/** A floor server: listening on an ephemeral port, and closing with its connections. */
interface Floor {
  listen(): Promise<AddressInfo>;
  close(): Promise<void>;
}

function nodeFloor(): Floor {
  const server = createServer({ keepAliveTimeout: 60_000 }, (req: IncomingMessage, res: ServerResponse) => {
    const body = answer(req.method, req.url, req.headers['cmcd-status'], req.socket);
    if (body === undefined) res.writeHead(404, { 'content-length': 0 }).end();
    else res.writeHead(200, { ...HEADERS, 'content-length': body.length }).end(body);
  });
  return {
    listen: () => new Promise((resolve) => server.listen(0, host, () => resolve(server.address() as AddressInfo))),
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function fastifyFloor(): Floor {
  const app = Fastify({ logger: false, keepAliveTimeout: 60_000, forceCloseConnections: true });
  app.get('/media/*', async (req, reply) => {
    const body = answer(req.method, req.url, req.headers['cmcd-status'], req.raw.socket);
    return body === undefined ? reply.code(404).send() : reply.headers(HEADERS).send(body);
  });
  return {
    listen: async () => {
      await app.listen({ port: 0, host });
      return app.server.address() as AddressInfo;
    },
    close: () => app.close(),
  };
}

const floor = framework === 'fastify' ? fastifyFloor() : nodeFloor();
const address = await floor.listen();
console.log(`listening on http://${host}:${address.port}`);
process.on('SIGTERM', () => void floor.close().then(() => process.exit(0)));
