// HTTP/2 clients that open more streams than the server allows, as an attacker would:
// frames written by hand over TLS (Node's own client queues requests over the peer's
// limit, so it cannot try this), every request for a 10 MB file, and no byte read back
// (the client never sends WINDOW_UPDATE). Each open media stream holds a descriptor and
// body in the server's buffers, so the server advertises a limit
// (limits.maxConcurrentStreams, SETTINGS_MAX_CONCURRENT_STREAMS) and refuses streams over it.
import tls from 'node:tls';
import http2 from 'node:http2';
import { join } from 'node:path';
import { MB, makeDir, makeSelfSignedCert, metricValue, openFds, opensslMissing, randomFile, removeDir, sleep, startServer, timedGet, waitFor, type RunningServer, type SelfSignedCert } from '../helpers.js';

const missing = opensslMissing();
const describeTls = missing === null ? describe : describe.skip;
if (missing !== null) console.log(`SKIP: HTTP/2 stream-limit tests need ${missing}`);

const FRAME = { HEADERS: 0x1, RST_STREAM: 0x3, SETTINGS: 0x4, GOAWAY: 0x7 } as const;
const FLAG = { END_STREAM: 0x1, ACK: 0x1, END_HEADERS: 0x4 } as const;
const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');
const SETTINGS_MAX_CONCURRENT_STREAMS = 0x3;

function frame(type: number, flags: number, streamId: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head.writeUInt8(type, 3);
  head.writeUInt8(flags, 4);
  head.writeUInt32BE(streamId, 5);
  return Buffer.concat([head, payload]);
}

/** An HPACK header block of literals without indexing (RFC 7541 6.2.2), every string under 127 bytes. */
function headerBlock(headers: Array<[string, string]>): Buffer {
  const parts: Buffer[] = [];
  for (const [name, value] of headers) {
    parts.push(Buffer.from([0x00, name.length]), Buffer.from(name), Buffer.from([value.length]), Buffer.from(value));
  }
  return Buffer.concat(parts);
}

interface Flood {
  /** RST_STREAM frames the server sent, by error code. */
  resets: Map<number, number>;
  goaway: number | null;
  /** The server's SETTINGS_MAX_CONCURRENT_STREAMS, as it advertised it. */
  advertisedMaxStreams: number | null;
  /** Streams that got a response HEADERS frame. */
  answered: Set<number>;
  socket: tls.TLSSocket;
}

/** Opens `streams` requests at once on one connection; `ackSettings`: whether to acknowledge the server's SETTINGS first. */
async function flood(port: number, cert: SelfSignedCert, streams: number, ackSettings: boolean): Promise<Flood> {
  const socket = tls.connect({ host: '127.0.0.1', port, ca: cert.cert, ALPNProtocols: ['h2'] });
  await new Promise<void>((resolve, reject) => {
    socket.once('secureConnect', resolve);
    socket.once('error', reject);
  });
  expect(socket.alpnProtocol).toBe('h2');
  const result: Flood = { resets: new Map(), goaway: null, advertisedMaxStreams: null, answered: new Set(), socket };
  let pending = Buffer.alloc(0);
  let settingsSeen!: () => void;
  const settings = new Promise<void>((resolve) => (settingsSeen = resolve));
  socket.on('data', (chunk: Buffer) => {
    pending = Buffer.concat([pending, chunk]);
    while (pending.length >= 9) {
      const length = pending.readUIntBE(0, 3);
      if (pending.length < 9 + length) break;
      const [type, flags, streamId] = [pending.readUInt8(3), pending.readUInt8(4), pending.readUInt32BE(5) & 0x7fffffff];
      const payload = pending.subarray(9, 9 + length);
      pending = pending.subarray(9 + length);
      if (type === FRAME.SETTINGS && (flags & FLAG.ACK) === 0) {
        for (let i = 0; i + 6 <= payload.length; i += 6) if (payload.readUInt16BE(i) === SETTINGS_MAX_CONCURRENT_STREAMS) result.advertisedMaxStreams = payload.readUInt32BE(i + 2);
        settingsSeen();
      } else if (type === FRAME.RST_STREAM) {
        const code = payload.readUInt32BE(0);
        result.resets.set(code, (result.resets.get(code) ?? 0) + 1);
      } else if (type === FRAME.GOAWAY) {
        result.goaway = payload.readUInt32BE(4);
      } else if (type === FRAME.HEADERS) {
        result.answered.add(streamId);
      }
    }
  });
  socket.on('error', () => undefined);
  socket.write(Buffer.concat([PREFACE, frame(FRAME.SETTINGS, 0, 0)]));
  await settings;
  if (ackSettings) socket.write(frame(FRAME.SETTINGS, FLAG.ACK, 0));
  const requests: Buffer[] = [];
  for (let i = 0; i < streams; i++) {
    const block = headerBlock([[':method', 'GET'], [':scheme', 'https'], [':authority', `127.0.0.1:${port}`], [':path', '/media/big.m4s'], ['cmcd-status', 'rtp=8000']]);
    requests.push(frame(FRAME.HEADERS, FLAG.END_STREAM | FLAG.END_HEADERS, 2 * i + 1, block));
  }
  socket.write(Buffer.concat(requests));
  return result;
}

describeTls('HTTP/2: a client opening far more streams than allowed, reading nothing', () => {
  let dir: string;
  let cert: SelfSignedCert;
  let server: RunningServer;
  const LIMIT = 100;
  const STREAMS = 1000;

  beforeAll(async () => {
    dir = makeDir({ 'media/big.m4s': randomFile(10 * MB) });
    cert = makeSelfSignedCert(dir);
    server = await startServer({ mediaDir: join(dir, 'media'), http2: true, tls: { certFile: cert.certFile, keyFile: cert.keyFile } });
  });
  let flooding: tls.TLSSocket | null = null;
  // A failed case must not leave its session holding the server open.
  afterEach(() => flooding?.destroy());
  afterAll(async () => {
    await server.close();
    removeDir(dir);
  });

  test.each([
    ['before acknowledging the SETTINGS', false],
    ['after acknowledging the SETTINGS', true],
  ])('%s: the limit is advertised, at most that many streams are ever held, the rest refused; nothing is left once the client goes', async (_, ack) => {
    const fdsBefore = openFds();
    const pacing = server.app.sammy.http2Pacing!;
    const f = await flood(server.port, cert, STREAMS, ack);
    flooding = f.socket;
    let peakStreams = 0;
    let peakFds = 0;
    const watch = setInterval(() => {
      peakStreams = Math.max(peakStreams, pacing.activeStreams);
      peakFds = Math.max(peakFds, openFds() ?? 0);
    }, 20);
    // The refusals, or the session's end, arrive; the held streams fill their windows and wait.
    await waitFor(() => (f.goaway !== null || f.socket.destroyed || [...f.resets.values()].reduce((a, b) => a + b, 0) + f.answered.size >= STREAMS ? true : null));
    await sleep(500);
    clearInterval(watch);
    const refused = f.resets.get(http2.constants.NGHTTP2_REFUSED_STREAM) ?? 0;
    console.log(
      `${STREAMS} streams ${ack ? 'after' : 'before'} the SETTINGS ack: advertised ${f.advertisedMaxStreams}, answered ${f.answered.size}, refused ${refused}, ` +
        `other resets ${JSON.stringify(Object.fromEntries([...f.resets].filter(([code]) => code !== http2.constants.NGHTTP2_REFUSED_STREAM)))}, GOAWAY ${f.goaway}, ` +
        `connection ${f.socket.destroyed ? 'closed by the server' : 'open'}; ` +
        `server held at most ${peakStreams} streams, ${fdsBefore === null ? '?' : peakFds - fdsBefore} more descriptors`,
    );
    expect(f.advertisedMaxStreams).toBe(LIMIT);
    expect(peakStreams).toBeLessThanOrEqual(LIMIT);
    expect(f.answered.size).toBeLessThanOrEqual(LIMIT);
    // Either each stream over the limit is refused (before the client acknowledged the
    // limit), or the client loses its session (after: RFC 9113 5.1.2 lets the server
    // treat it as a protocol error, and nghttp2 does).
    expect(refused >= STREAMS - LIMIT || f.goaway !== null || f.socket.destroyed).toBe(true);
    if (fdsBefore !== null) expect(peakFds - fdsBefore).toBeLessThanOrEqual(LIMIT + 10);
    f.socket.destroy();
    await waitFor(() => (pacing.activeStreams === 0 ? true : null));
    if (fdsBefore !== null) await waitFor(() => (openFds()! <= fdsBefore ? true : null));
    const metrics = await timedGet(server.port, '/metrics', { ca: cert.cert, keepBody: true });
    expect(metrics.status).toBe(200);
    expect(metricValue(metrics.body!.toString(), 'sammy_errors_total{kind="server"}') ?? 0).toBe(0);
  }, 30_000);
});
