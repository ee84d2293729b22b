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

/** The shortest tcp_info holding every field above (kernels from 4.19 on). */
export const TCP_INFO_MIN_BYTES = Math.max(...Object.values(TCP_INFO_FIELDS).map((f) => f.offset + f.bytes));

/** u64 rates at or above this are the kernel's "unlimited" (~0UL), not a rate. */
const UNLIMITED_FLOOR = 2n ** 63n;

/** Decodes a getsockopt(TCP_INFO) result; null when the kernel returned too few bytes. */
export function parseTcpInfo(buf: Buffer, lengthBytes: number): TcpInfo | null {
  if (lengthBytes < TCP_INFO_MIN_BYTES || buf.length < lengthBytes) return null;
  const u32 = (field: TcpInfoField): number => buf.readUInt32LE(TCP_INFO_FIELDS[field].offset);
  const u64 = (field: TcpInfoField): number => Number(buf.readBigUInt64LE(TCP_INFO_FIELDS[field].offset));
  const rate = (field: TcpInfoField): number | null => {
    const value = buf.readBigUInt64LE(TCP_INFO_FIELDS[field].offset);
    return value >= UNLIMITED_FLOOR ? null : Number(value);
  };
  return {
    sndMssBytes: u32('sndMssBytes'),
    rttUs: u32('rttUs'),
    rttVarUs: u32('rttVarUs'),
    sndCwndPackets: u32('sndCwndPackets'),
    totalRetrans: u32('totalRetrans'),
    pacingRateBytesPerS: rate('pacingRateBytesPerS'),
    maxPacingRateBytesPerS: rate('maxPacingRateBytesPerS'),
    bytesAcked: u64('bytesAcked'),
    notsentBytes: u32('notsentBytes'),
    minRttUs: u32('minRttUs'),
    deliveryRateBytesPerS: u64('deliveryRateBytesPerS'),
    bytesSent: u64('bytesSent'),
    bytesRetrans: u64('bytesRetrans'),
    lengthBytes,
  };
}
