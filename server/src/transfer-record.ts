/** Shared by the event loop's side of the zero-copy body path (body-sender.ts) and its sender thread (sender-loop.ts). */
import { TCP_INFO_BUFFER_BYTES } from './tcpinfo.js';

/**
 * The layout of a transfer's shared record: body bytes sent so far (a BigInt64 at
 * 0), and the socket's TCP_INFO read when the transfer ended (done: its last byte
 * had left; or aborted), its length an Int32 at 8 (0 until then, or if unreadable)
 * and its bytes from 16. The event loop's own descriptor may be closed by then (a
 * client that sent "Connection: close"), so the response's telemetry comes from here.
 */
export const TransferRecord = {
  sentIndex: 0,
  infoLengthIndex: 2,
  infoOffset: 16,
  bytes: 16 + TCP_INFO_BUFFER_BYTES,
} as const;
