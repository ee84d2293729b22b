// The sender thread's tail protocol (README "Body path") on a real loopback socket:
// the thread sends all but a body's last byte and says so (`tailDue`: for a paced
// body once those bytes have left the socket, for an unpaced one once the kernel
// has them); the event loop writes the byte and says `tailWritten`; the thread
// reports the transfer done once that byte has left too, with the socket's TCP_INFO
// read then. Nothing polls on the event loop's side.
import { createHash } from 'node:crypto';
import { openSync, readdirSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { BodySender, type Transfer, type TransferResult } from '../src/body-sender.js';
import { loadSendfileBinding } from '../src/sendfile-binding.js';
import type { TailMode } from '../src/sender-loop.js';
import { loadSocketControl, socketFd } from '../src/socket.js';
import { makeDir, MB, randomFile, removeDir, waitFor } from './helpers.js';

const binding = loadSendfileBinding();
const describeZeroCopy = binding.available ? describe : describe.skip;
if (!binding.available) console.log(`SKIP: sender tests need sendfile and epoll: ${binding.reason}`);

const sha256 = (data: Buffer): string => createHash('sha256').update(data).digest('hex');
const control = loadSocketControl();
const openFds = (): number => readdirSync('/proc/self/fd').length;

interface Connection {
  /** The server's end, whose descriptor the sender gets. */
  socket: net.Socket;
  received: () => Buffer;
  /** The reads the client has had so far, each as it came. */
  reads: () => Buffer[];
  close: () => void;
}

async function connect(server: net.Server): Promise<Connection> {
  const accepted = new Promise<net.Socket>((resolve) => server.once('connection', resolve));
  const client = net.connect((server.address() as net.AddressInfo).port, '127.0.0.1');
  const chunks: Buffer[] = [];
  client.on('data', (chunk: Buffer) => chunks.push(chunk));
  const socket = await accepted;
  return {
    socket,
    received: () => Buffer.concat(chunks),
    reads: () => chunks,
    close: () => {
      client.destroy();
      socket.destroy();
    },
  };
}

describeZeroCopy('the sender thread and a body tail written by the event loop', () => {
  const BODY = randomFile(3 * MB);
  let dir: string;
  let file: string;
  let sender: BodySender;
  let server: net.Server;

  beforeAll(async () => {
    dir = makeDir({});
    file = join(dir, 'body.bin');
    writeFileSync(file, BODY);
    sender = await BodySender.start(() => undefined);
    server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    await sender.stop();
    server.close();
    removeDir(dir);
  });

  /** Hands all but the last byte to the sender; when told, writes that byte through Node and says so. */
  function send(conn: Connection, tail: Exclude<TailMode, 'none'>, onTailDue: (transfer: Transfer) => void = () => undefined) {
    const events: string[] = [];
    let transfer: Transfer | null = null;
    const ended = new Promise<TransferResult>((resolve) => {
      const started = sender.transfer(
        {
          socketFd: socketFd(conn.socket)!,
          fileFd: openSync(file, 'r'),
          offsetBytes: 0,
          lengthBytes: BODY.length - 1,
          burst: null,
          notsentLimitBytes: null,
          tail,
          corked: false,
        },
        {
          onTailDue: () => {
            events.push(`tailDue sent=${transfer!.sentBytes} notsent=${control.readTcpInfo(socketFd(conn.socket)!)!.notsentBytes}`);
            onTailDue(transfer!);
          },
          onEnd: (result) => {
            events.push(`end ${result.outcome}`);
            resolve(result);
          },
        },
      );
      if (typeof started === 'string') throw new Error(started);
      transfer = started;
    });
    return { events, ended, transfer: () => transfer! };
  }

  const writeTail = (conn: Connection) => (transfer: Transfer) => conn.socket.write(BODY.subarray(BODY.length - 1), () => transfer.tailWritten());

  test.each([['afterLeft'], ['afterHanded']] as Array<[Exclude<TailMode, 'none'>]>)(
    'tail %s: the byte goes after the rest, the transfer is done once it has left, with TCP_INFO read then',
    async (tail) => {
      const conn = await connect(server);
      try {
        const { events, ended, transfer } = send(conn, tail, writeTail(conn));
        expect(await ended).toEqual({ outcome: 'done' });
        expect(events[0]).toMatch(new RegExp(`^tailDue sent=${BODY.length - 1} `));
        // A paced body's tail waits until everything before it has left the socket.
        if (tail === 'afterLeft') expect(events[0]).toMatch(/ notsent=0$/);
        expect(events[1]).toBe('end done');
        const info = transfer().endTcpInfo()!;
        expect(info.notsentBytes).toBe(0);
        expect(info.bytesSent).toBeGreaterThanOrEqual(BODY.length);
        await waitFor(() => (conn.received().length === BODY.length ? true : null));
        expect(sha256(conn.received())).toBe(sha256(BODY));
        expect(sender.inFlight).toBe(0);
      } finally {
        conn.close();
      }
    },
    20_000,
  );

  test('a head written under the cork waits for the body and leaves with its first bytes; the socket is uncorked after', async () => {
    const conn = await connect(server);
    const HEAD = Buffer.from(`HTTP/1.1 200 OK\r\nContent-Length: ${BODY.length}\r\n\r\n`);
    try {
      const fd = socketFd(conn.socket)!;
      expect(sender.corkHead(fd)).toBe(true);
      await new Promise<void>((resolve) => conn.socket.write(HEAD, () => resolve()));
      // Held in the kernel (TCP_CORK keeps a partial segment up to 200 ms).
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(conn.received().length).toBe(0);
      const ended = new Promise<TransferResult>((resolve, reject) => {
        const started = sender.transfer(
          { socketFd: fd, fileFd: openSync(file, 'r'), offsetBytes: 0, lengthBytes: BODY.length, burst: null, notsentLimitBytes: null, tail: 'none', corked: true },
          { onTailDue: () => reject(new Error('no tail was asked for')), onEnd: resolve },
        );
        if (typeof started === 'string') reject(new Error(started));
      });
      expect(await ended).toEqual({ outcome: 'done' });
      await waitFor(() => (conn.received().length === HEAD.length + BODY.length ? true : null));
      // The first read already holds body bytes behind the head: they shared a segment.
      expect(conn.reads()[0]!.length).toBeGreaterThan(HEAD.length);
      expect(sha256(conn.received())).toBe(sha256(Buffer.concat([HEAD, BODY])));
      // Uncorked: a short write goes at once, not after the cork's 200 ms.
      const beforeMs = performance.now();
      conn.socket.write('x');
      await waitFor(() => (conn.received().length === HEAD.length + BODY.length + 1 ? true : null));
      expect(performance.now() - beforeMs).toBeLessThan(150);
    } finally {
      conn.close();
    }
  }, 20_000);

  test('a transfer aborted while it waits for the tail ends aborted, with TCP_INFO, and lets go of both descriptors', async () => {
    const conn = await connect(server);
    const fdsBefore = openFds();
    try {
      // The tail is never written: the response was ended another way (a later request found its bytes gone).
      const { ended, transfer } = send(conn, 'afterLeft', (t) => t.abort());
      expect(await ended).toEqual({ outcome: 'aborted' });
      expect(transfer().endTcpInfo()).not.toBeNull();
      expect(sender.inFlight).toBe(0);
      // The file the sender was given and its duplicate of the socket are closed.
      expect(openFds()).toBeLessThanOrEqual(fdsBefore);
    } finally {
      conn.close();
    }
  }, 20_000);
});
