import net from 'node:net';
import { loadSocketControl, socketFd, UNLIMITED_PACING_RATE } from '../src/socket.js';
import { parseTcpInfo, TCP_INFO_MIN_BYTES } from '../src/tcpinfo.js';

describe('parseTcpInfo', () => {
  test('reads the fields at their offsets; ~0 rates are unlimited (null)', () => {
    const buf = Buffer.alloc(280);
    buf.writeUInt32LE(1448, 16);
    buf.writeUInt32LE(5123, 68);
    buf.writeUInt32LE(7, 100);
    buf.writeBigUInt64LE(2n ** 64n - 1n, 104);
    buf.writeBigUInt64LE(5_000_000n, 112);
    buf.writeUInt32LE(4000, 148);
    buf.writeBigUInt64LE(123_456n, 160);
    buf.writeBigUInt64LE(9_000_000n, 200);
    buf.writeBigUInt64LE(2896n, 208);
    expect(parseTcpInfo(buf, 280)).toMatchObject({
      sndMssBytes: 1448, rttUs: 5123, totalRetrans: 7, pacingRateBytesPerS: null, maxPacingRateBytesPerS: 5_000_000,
      minRttUs: 4000, deliveryRateBytesPerS: 123_456, bytesSent: 9_000_000, bytesRetrans: 2896, lengthBytes: 280,
    });
  });

  test('u64 fields above 2^32 keep both halves; rates from 2^63 up are unlimited', () => {
    const buf = Buffer.alloc(280);
    buf.writeBigUInt64LE(5_000_000_123n, 200);
    buf.writeBigUInt64LE(2n ** 53n - 1n, 120);
    buf.writeBigUInt64LE(2n ** 63n - 1n, 104);
    buf.writeBigUInt64LE(2n ** 63n, 112);
    buf.writeBigUInt64LE(2n ** 40n + 7n, 160);
    expect(parseTcpInfo(buf, 280)).toMatchObject({
      bytesSent: 5_000_000_123,
      bytesAcked: Number.MAX_SAFE_INTEGER,
      pacingRateBytesPerS: Number(2n ** 63n - 1n),
      maxPacingRateBytesPerS: null,
      deliveryRateBytesPerS: 2 ** 40 + 7,
    });
  });

  test('a short answer (an older kernel) is refused rather than misread', () => {
    expect(TCP_INFO_MIN_BYTES).toBe(216);
    expect(parseTcpInfo(Buffer.alloc(232), 200)).toBeNull();
  });
});

const control = loadSocketControl();
const testLinux = control.available ? test : test.skip;
if (!control.available) console.log(`SKIP: socket option round trip needs Linux: ${control.unavailableReason}`);

testLinux('SO_MAX_PACING_RATE round-trips through the kernel (koffi)', async () => {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const accepted = new Promise<net.Socket>((r) => server.once('connection', r));
  const client = net.connect((server.address() as net.AddressInfo).port, '127.0.0.1');
  const socket = await accepted;
  try {
    const fd = socketFd(socket)!;
    expect(control.readTcpInfo(fd)!.maxPacingRateBytesPerS).toBeNull();
    expect(control.setMaxPacingRate(fd, 1_234_567n)).toEqual({ ok: true });
    const info = control.readTcpInfo(fd)!;
    expect(info.maxPacingRateBytesPerS).toBe(1_234_567);
    expect(info.lengthBytes).toBeGreaterThanOrEqual(TCP_INFO_MIN_BYTES);
    expect(control.setMaxPacingRate(fd, UNLIMITED_PACING_RATE)).toEqual({ ok: true });
    expect(control.readTcpInfo(fd)!.maxPacingRateBytesPerS).toBeNull();
    expect(control.setMaxPacingRate(-1, 1000n)).toEqual({ ok: false, error: 'setsockopt(SO_MAX_PACING_RATE) failed: EBADF' });
  } finally {
    client.destroy();
    socket.destroy();
    server.close();
  }
});
