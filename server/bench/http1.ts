// A minimal HTTP/1.1 client over one connection, for the bench's timing jobs: it
// writes request heads exactly when told (several at once to pipeline them) and
// records, per response, when its first and last bytes arrived. Node's http client
// cannot pipeline, and its agent adds its own scheduling to the times measured.
// It reads what the bench's servers send: a status line, headers, a
// Content-Length body (no chunked encoding, no 1xx).
import net from 'node:net';
import tls from 'node:tls';

export interface Http1Response {
  status: number;
  bodyBytes: number;
  /** Milliseconds from the write of this response's request to its first byte. */
  firstByteMs: number;
  /** Milliseconds from the write of this response's request to its last byte. */
  lastByteMs: number;
  /** Milliseconds, on this connection's clock, when its first and last bytes arrived. */
  firstByteAtMs: number;
  lastByteAtMs: number;
  /** The Server-Timing header (the applied pace), if any. */
  serverTiming: string | null;
}

interface Pending {
  sentAtMs: number;
  resolve: (r: Http1Response) => void;
  reject: (err: Error) => void;
}

const HEAD_END = Buffer.from('\r\n\r\n');
/** A head longer than this is not from the bench's servers. */
const MAX_HEAD_BYTES = 64 * 1024;

export function requestHead(host: string, path: string, headers: Record<string, string> = {}): string {
  const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  return `GET ${path} HTTP/1.1\r\nHost: ${host}\r\n${extra}\r\n`;
}

export class Http1Connection {
  readonly socket: net.Socket;
  readonly #t0 = performance.now();
  readonly #pending: Pending[] = [];
  #head: Buffer = Buffer.alloc(0);
  /** The response being read: its status, headers' fields, body bytes still to come. */
  #current: { status: number; remaining: number; bodyBytes: number; firstByteAtMs: number; serverTiming: string | null } | null = null;
  #error: Error | null = null;

  private constructor(socket: net.Socket) {
    this.socket = socket;
    socket.on('data', (chunk: Buffer) => this.#onData(chunk));
    socket.on('error', (err) => this.#fail(err));
    socket.on('close', () => this.#fail(new Error('connection closed')));
  }

  /** Connects (TLS when `tlsServername` is given; the bench's certificates are self-signed, so unverified). */
  static open(host: string, port: number, o: { tls?: boolean; timeoutMs?: number } = {}): Promise<Http1Connection> {
    return new Promise((resolve, reject) => {
      const socket = o.tls ? tls.connect({ host, port, rejectUnauthorized: false }) : net.connect({ host, port });
      const ready = o.tls ? 'secureConnect' : 'connect';
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new Error(`connect to ${host}:${port} timed out`));
      }, o.timeoutMs ?? 30_000);
      socket.once(ready, () => {
        clearTimeout(timer);
        socket.setNoDelay(true);
        socket.removeListener('error', reject);
        resolve(new Http1Connection(socket));
      });
      socket.once('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
    });
  }

  /** Milliseconds since this connection was opened. */
  now(): number {
    return performance.now() - this.#t0;
  }

  /** Writes the heads in one write (pipelined when more than one) and resolves with each response in order. */
  send(heads: string[]): Array<Promise<Http1Response>> {
    const sentAtMs = this.now();
    const promises = heads.map(
      () =>
        new Promise<Http1Response>((resolve, reject) => {
          if (this.#error !== null) reject(this.#error);
          else this.#pending.push({ sentAtMs, resolve, reject });
        }),
    );
    if (this.#error === null) this.socket.write(heads.join(''));
    return promises;
  }

  get(head: string): Promise<Http1Response> {
    return this.send([head])[0]!;
  }

  close(): void {
    this.socket.destroy();
  }

  #fail(err: Error): void {
    if (this.#error !== null) return;
    this.#error = err;
    for (const p of this.#pending.splice(0)) p.reject(err);
  }

  #onData(chunk: Buffer): void {
    const atMs = this.now();
    let data = chunk;
    while (data.length > 0) {
      if (this.#current === null) {
        const head = this.#head.length === 0 ? data : Buffer.concat([this.#head, data]);
        const end = head.indexOf(HEAD_END);
        if (end === -1) {
          if (head.length > MAX_HEAD_BYTES) return this.#fail(new Error('response head too long'));
          this.#head = head;
          return;
        }
        this.#head = Buffer.alloc(0);
        const text = head.subarray(0, end).toString('latin1');
        const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1] ?? NaN);
        const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(text)?.[1] ?? 0);
        const serverTiming = /\r\nserver-timing:\s*([^\r]*)/i.exec(text)?.[1] ?? null;
        if (!Number.isInteger(status)) return this.#fail(new Error(`not an HTTP response: ${text.slice(0, 80)}`));
        this.#current = { status, remaining: length, bodyBytes: 0, firstByteAtMs: atMs, serverTiming };
        data = head.subarray(end + HEAD_END.length);
      }
      const current = this.#current;
      const take = Math.min(current.remaining, data.length);
      current.remaining -= take;
      current.bodyBytes += take;
      data = data.subarray(take);
      if (current.remaining === 0) {
        this.#current = null;
        const pending = this.#pending.shift();
        if (pending === undefined) return this.#fail(new Error('a response nobody asked for'));
        pending.resolve({
          status: current.status,
          bodyBytes: current.bodyBytes,
          firstByteMs: current.firstByteAtMs - pending.sentAtMs,
          lastByteMs: atMs - pending.sentAtMs,
          firstByteAtMs: current.firstByteAtMs,
          lastByteAtMs: atMs,
          serverTiming: current.serverTiming,
        });
      }
    }
  }
}
