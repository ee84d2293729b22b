/**
 * The HTTP neighbour's client (runs in the client namespace): issues GETs one after
 * another, each on a new connection, until `--duration-s` has passed or it is told
 * to stop. Prints one JSON line per finished request: the response time runs from
 * the first request byte (written as soon as the connection is up) to the last
 * response byte (thesis section 2.6).
 */
import { request } from 'node:http';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: { url: { type: 'string' }, 'duration-s': { type: 'string', default: '30' }, 'gap-ms': { type: 'string', default: '0' } },
});
const url = new URL(values.url!);
const endAt = Date.now() + Number(values['duration-s']) * 1000;
// Stdout is a pipe (synchronous on Linux): finished requests are already written.
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => process.exit(0));

function once(): Promise<void> {
  return new Promise((resolve) => {
    let firstByteMs = Date.now();
    let bytes = 0;
    const req = request(url, { agent: false, headers: { connection: 'close' } }, (res) => {
      res.on('data', (chunk: Buffer) => (bytes += chunk.length));
      res.on('end', () => {
        const endMs = Date.now();
        process.stdout.write(`${JSON.stringify({ startMs: firstByteMs, endMs, bytes, status: res.statusCode })}\n`);
        resolve();
      });
      res.on('error', () => resolve());
    });
    req.on('socket', (socket) => socket.once('connect', () => (firstByteMs = Date.now())));
    req.on('error', (err) => {
      process.stderr.write(`request failed: ${err.message}\n`);
      setTimeout(resolve, 100);
    });
    req.end();
  });
}

while (Date.now() < endAt) {
  await once();
  if (Number(values['gap-ms']) > 0) await new Promise((r) => setTimeout(r, Number(values['gap-ms'])));
}
process.exit(0);
