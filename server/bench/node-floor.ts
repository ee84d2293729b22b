// Node's own floor for the CPU section (bench/cpu.ts): node:http answering the
// section's requests for its files from memory, with no framework, no file system
// call, no range or conditional logic, no telemetry and no metrics. A request with a
// CMCD `rtp` caps its connection with SO_MAX_PACING_RATE (the server's own binding,
// src/socket.ts) and leaves the kernel to make the trains, as `--burst-mode kernel`
// does; the cap is set once per connection, since the section's clients ask every
// request on a connection for the same rate. What the server's rows cost beyond this
// is the server's own work per response; what this costs beyond nginx is Node's.
//
//   node --import tsx bench/node-floor.ts MEDIA_DIR HOST
//
// Prints `listening on http://HOST:PORT` (the server's contract line, so the bench
// starts it with startServer) and exits on SIGTERM.
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { loadSocketControl, socketFd } from '../src/socket.js';

const [mediaDir, host] = process.argv.slice(2);
if (!mediaDir || !host) {
  console.error('usage: node --import tsx bench/node-floor.ts MEDIA_DIR HOST');
  process.exit(2);
}

const bodies = new Map<string, Buffer>(
  readdirSync(mediaDir)
    .filter((name) => name.endsWith('.m4s'))
    .map((name) => [`/media/${name}`, readFileSync(join(mediaDir, name))] as const),
);
const control = loadSocketControl();
const paced = new WeakSet<object>();
const RTP = /(?:^|,)\s*rtp=(\d+)/;

function answer(req: IncomingMessage, res: ServerResponse): void {
  const body = req.method === 'GET' ? bodies.get(req.url ?? '') : undefined;
  if (body === undefined) {
    res.writeHead(404, { 'content-length': 0 }).end();
    return;
  }
  const rtp = RTP.exec(String(req.headers['cmcd-status'] ?? ''));
  if (rtp && !paced.has(req.socket)) {
    const fd = socketFd(req.socket);
    if (fd !== null && control.setMaxPacingRate(fd, BigInt(Number(rtp[1]) * 125)).ok) paced.add(req.socket);
  }
  res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': body.length }).end(body);
}

const server = createServer({ keepAliveTimeout: 60_000 }, answer);
server.listen(0, host, () => console.log(`listening on http://${host}:${(server.address() as AddressInfo).port}`));
process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
