/**
 * The rate the server applied to a response, from its header
 * `Server-Timing: pace;dur=<kbps, 0 when unpaced>;desc="<paced|unpaced|disabled|unavailable>"`
 * (docs/server-contract.md). Returns null when the response was not paced or the header is absent.
 */
export function appliedRateKbps(serverTiming: string | null | undefined): number | null {
  if (!serverTiming) return null;
  for (const metric of serverTiming.split(',')) {
    const [name, ...params] = metric.split(';').map((p) => p.trim());
    if (name !== 'pace') continue;
    const dur = params.find((p) => p.toLowerCase().startsWith('dur='));
    const kbps = dur === undefined ? Number.NaN : Number(dur.slice(4));
    return Number.isFinite(kbps) && kbps > 0 ? kbps : null;
  }
  return null;
}
