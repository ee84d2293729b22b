/**
 * An HTTP/2 client that opens more streams than a server allows, as an attacker would:
 * frames written by hand over TLS (node:http2's own client queues requests over the
 * peer's limit, so it cannot try this), with literal HPACK headers and no byte read
 * back. Used by the Node server's hostile tests and nginx's.
 */
import tls from 'node:tls';

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
    if (name.length > 126 || value.length > 126) throw new Error(`headerBlock: ${name} is too long for a one-byte length`);
    parts.push(Buffer.from([0x00, name.length]), Buffer.from(name), Buffer.from([value.length]), Buffer.from(value));
  }
  return Buffer.concat(parts);
}

export interface H2Flood {
  /** RST_STREAM frames the server sent, by error code. */
  resets: Map<number, number>;
  goaway: number | null;
  /** The server's SETTINGS_MAX_CONCURRENT_STREAMS, as it advertised it. */
  advertisedMaxStreams: number | null;
  /** Streams that got a response HEADERS frame. */
  answered: Set<number>;
  socket: tls.TLSSocket;
}

/**
 * Opens `streams` requests for `path` at once on one connection and reads nothing back
 * (no WINDOW_UPDATE); `ackSettings`: whether to acknowledge the server's SETTINGS first.
 * Resolves once the requests are written; the result fills in as frames arrive.
 */
export async function h2StreamFlood(port: number, ca: Buffer, o: { streams: number; path: string; ackSettings: boolean }): Promise<H2Flood> {
  const socket = tls.connect({ host: '127.0.0.1', port, ca, ALPNProtocols: ['h2'] });
  await new Promise<void>((resolve, reject) => {
    socket.once('secureConnect', resolve);
    socket.once('error', reject);
  });
  if (socket.alpnProtocol !== 'h2') throw new Error(`the server did not offer h2 (ALPN: ${String(socket.alpnProtocol)})`);
  const result: H2Flood = { resets: new Map(), goaway: null, advertisedMaxStreams: null, answered: new Set(), socket };
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
  if (o.ackSettings) socket.write(frame(FRAME.SETTINGS, FLAG.ACK, 0));
  const requests: Buffer[] = [];
  for (let i = 0; i < o.streams; i++) {
    const block = headerBlock([[':method', 'GET'], [':scheme', 'https'], [':authority', `127.0.0.1:${port}`], [':path', o.path], ['cmcd-status', 'rtp=8000']]);
    requests.push(frame(FRAME.HEADERS, FLAG.END_STREAM | FLAG.END_HEADERS, 2 * i + 1, block));
  }
  socket.write(Buffer.concat(requests));
  return result;
}
