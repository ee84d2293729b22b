// Rates cross the HTTP boundary in kbps (CTA-5004 `rtp`, Server-Timing) and the
// kernel boundary in bytes per second (SO_MAX_PACING_RATE, TCP_INFO). These two
// functions are the only places that convert between them.

/** CTA-5004 kbps (1000 bits/s) to bytes per second. */
export function kbpsToBytesPerS(rateKbps: number): number {
  return (rateKbps * 1000) / 8;
}

/** Bytes per second to kbps, for reporting measured rates. */
export function bytesPerSToKbps(rateBytesPerS: number): number {
  return (rateBytesPerS * 8) / 1000;
}
