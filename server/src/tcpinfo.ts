// struct tcp_info as Linux 6.x fills it (280 bytes on this kernel; the system
// headers describe 232). Offsets from include/uapi/linux/tcp.h, checked against
// this kernel's replies (docs/server-contract.md). Only the fields Sammy reports are decoded.

/** Byte offsets of the fields read, and their widths. */
export const TCP_INFO_FIELDS = {
  sndMssBytes: { offset: 16, bytes: 4 },
  rttUs: { offset: 68, bytes: 4 },
  rttVarUs: { offset: 72, bytes: 4 },
  sndCwndPackets: { offset: 80, bytes: 4 },
  totalRetrans: { offset: 100, bytes: 4 },
  pacingRateBytesPerS: { offset: 104, bytes: 8 },
  maxPacingRateBytesPerS: { offset: 112, bytes: 8 },
  bytesAcked: { offset: 120, bytes: 8 },
  notsentBytes: { offset: 144, bytes: 4 },
  minRttUs: { offset: 148, bytes: 4 },
  deliveryRateBytesPerS: { offset: 160, bytes: 8 },
  bytesSent: { offset: 200, bytes: 8 },
  bytesRetrans: { offset: 208, bytes: 8 },
} as const;

export type TcpInfoField = keyof typeof TCP_INFO_FIELDS;

/** Rates the kernel reports as ~0 (no cap) become null. */
export type TcpInfo = Record<Exclude<TcpInfoField, 'pacingRateBytesPerS' | 'maxPacingRateBytesPerS'>, number> & {
  pacingRateBytesPerS: number | null;
  maxPacingRateBytesPerS: number | null;
  /** How many bytes the kernel returned. */
  lengthBytes: number;
};

/** What a TCP_INFO read is given room for (this kernel fills 280). */
export const TCP_INFO_BUFFER_BYTES = 512;

/** The shortest tcp_info holding every field above (kernels from 4.19 on). */
export const TCP_INFO_MIN_BYTES = Math.max(...Object.values(TCP_INFO_FIELDS).map((f) => f.offset + f.bytes));

/** 2^32, to assemble a u64 from its two halves. */
const U32_SPAN = 2 ** 32;
/** A u64 whose high half is at least this (2^63 and up) is the kernel's "unlimited" (~0UL), not a rate. */
const UNLIMITED_HIGH_HALF = 2 ** 31;

const u32 = (buf: Buffer, field: TcpInfoField): number => buf.readUInt32LE(TCP_INFO_FIELDS[field].offset);

/**
 * A u64 as a number (exact below 2^53, like Number(bigint) above). Read as two u32s:
 * the reads run several times per response, and a BigInt per field costs more than
 * the system call.
 */
function u64(buf: Buffer, field: TcpInfoField): number {
  const offset = TCP_INFO_FIELDS[field].offset;
  return buf.readUInt32LE(offset + 4) * U32_SPAN + buf.readUInt32LE(offset);
}

function rate(buf: Buffer, field: TcpInfoField): number | null {
  return buf.readUInt32LE(TCP_INFO_FIELDS[field].offset + 4) >= UNLIMITED_HIGH_HALF ? null : u64(buf, field);
}

/** Decodes a getsockopt(TCP_INFO) result; null when the kernel returned too few bytes. */
export function parseTcpInfo(buf: Buffer, lengthBytes: number): TcpInfo | null {
  if (lengthBytes < TCP_INFO_MIN_BYTES || buf.length < lengthBytes) return null;
  return {
    sndMssBytes: u32(buf, 'sndMssBytes'),
    rttUs: u32(buf, 'rttUs'),
    rttVarUs: u32(buf, 'rttVarUs'),
    sndCwndPackets: u32(buf, 'sndCwndPackets'),
    totalRetrans: u32(buf, 'totalRetrans'),
    pacingRateBytesPerS: rate(buf, 'pacingRateBytesPerS'),
    maxPacingRateBytesPerS: rate(buf, 'maxPacingRateBytesPerS'),
    bytesAcked: u64(buf, 'bytesAcked'),
    notsentBytes: u32(buf, 'notsentBytes'),
    minRttUs: u32(buf, 'minRttUs'),
    deliveryRateBytesPerS: u64(buf, 'deliveryRateBytesPerS'),
    bytesSent: u64(buf, 'bytesSent'),
    bytesRetrans: u64(buf, 'bytesRetrans'),
    lengthBytes,
  };
}
