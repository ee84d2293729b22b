/**
 * The HTTP neighbour's server (runs in the server namespace): every GET answers
 * with `--bytes` bytes. Prints `listening <port>` once bound.
 */
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { port: { type: 'string', default: '0' }, bytes: { type: 'string', default: '3000000' } } });
const body = Buffer.alloc(Number(values.bytes), 0x61);
const server = createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': body.length, 'cache-control': 'no-store' });
  res.end(body);
});
server.listen(Number(values.port), '0.0.0.0', () => {
  const address = server.address();
  process.stdout.write(`listening ${typeof address === 'object' && address ? address.port : values.port}\n`);
});
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => server.close(() => process.exit(0)));
