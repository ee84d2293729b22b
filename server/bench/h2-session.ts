// One HTTP/2 client session as a browser opens it, for the bench's HTTP/2 load and the
// servers' HTTP/2 tests. Chromium's windows (6 MB a stream, 15 MB the connection): with
// HTTP/2's default 64 KB the client's WINDOW_UPDATE round trips, not the server's cap,
// set the pace (4.4-4.6 MB/s at a 5 MB/s cap on loopback).
import http2, { type ClientHttp2Session, type SecureClientSessionOptions } from 'node:http2';

export const H2_STREAM_WINDOW_BYTES = 6 * 1024 * 1024;
export const H2_CONNECTION_WINDOW_BYTES = 15 * 1024 * 1024;

/** Connects to `origin` over TLS (`tls`: whom to trust); a browser's windows unless `browserWindows` is false. */
export function connectH2(origin: string, tls: Pick<SecureClientSessionOptions, 'ca' | 'rejectUnauthorized'>, browserWindows = true): Promise<ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(origin, { ...tls, ...(browserWindows && { settings: { initialWindowSize: H2_STREAM_WINDOW_BYTES } }) });
    session.once('error', reject);
    session.once('connect', () => {
      if (browserWindows) session.setLocalWindowSize(H2_CONNECTION_WINDOW_BYTES);
      resolve(session);
    });
  });
}
