// Burst trains from a sender-side tcpdump: packets of one flow that leave less than
// TRAIN_GAP_US apart belong to one train (a train's packets leave microseconds apart; at the
// bench's rates, up to 100 Mbit/s, even 4-packet trains are over 400 us apart). A captured frame
// may be a GSO packet of several segments (veth carries them whole): it counts as
// ceil(payload / MSS) back-to-back packets.

export const TRAIN_GAP_US = 50;

export interface CapturedFrame {
  timeNs: bigint;
  flow: string;
  payloadBytes: number;
}

/** Frames with payload from `tcpdump -n -tt --time-stamp-precision=nano -r FILE` text. */
export function parseTcpdump(text: string): CapturedFrame[] {
  const frames: CapturedFrame[] = [];
  for (const line of text.split('\n')) {
    const m = /^(\d+)\.(\d{9}) IP (\S+) > (\S+): .* length (\d+)/.exec(line);
    if (m === null) continue;
    const payloadBytes = Number(m[5]);
    if (payloadBytes === 0) continue;
    frames.push({ timeNs: BigInt(m[1]!) * 1_000_000_000n + BigInt(m[2]!), flow: `${m[3]}>${m[4]!.replace(/:$/, '')}`, payloadBytes });
  }
  return frames;
}

/**
 * Train lengths in packets, per flow in time order, after skipping each flow's first
 * `skipPackets` packets (Linux never paces the first 10 segments of a connection).
 */
export function trainLengths(frames: CapturedFrame[], mssBytes: number, skipPackets = 10): number[] {
  const byFlow = new Map<string, CapturedFrame[]>();
  for (const f of frames) {
    const list = byFlow.get(f.flow) ?? [];
    list.push(f);
    byFlow.set(f.flow, list);
  }
  const trains: number[] = [];
  for (const list of byFlow.values()) {
    list.sort((a, b) => (a.timeNs < b.timeNs ? -1 : a.timeNs > b.timeNs ? 1 : 0));
    let skipped = 0;
    let current = 0;
    let lastNs: bigint | null = null;
    for (const f of list) {
      const packets = Math.ceil(f.payloadBytes / mssBytes);
      if (skipped < skipPackets) {
        skipped += packets;
        lastNs = f.timeNs;
        continue;
      }
      if (lastNs !== null && current > 0 && f.timeNs - lastNs > BigInt(TRAIN_GAP_US * 1000)) {
        trains.push(current);
        current = 0;
      }
      current += packets;
      lastNs = f.timeNs;
    }
    if (current > 0) trains.push(current);
  }
  return trains;
}

export const TRAIN_BUCKETS: Array<[number, number]> = [
  [1, 1],
  [2, 2],
  [3, 3],
  [4, 4],
  [5, 8],
  [9, 16],
  [17, 32],
  [33, 40],
  [41, Infinity],
];

export interface TrainSummary {
  trains: number;
  packets: number;
  maxPackets: number;
  /** Share of packets that left in trains of at most N. */
  packetsInTrainsAtMostN: number;
  /** Share of packets per bucket of train length. */
  packetShareByBucket: number[];
}

export function summarizeTrains(trains: number[], n: number): TrainSummary {
  const packets = trains.reduce((a, b) => a + b, 0);
  const share = (pred: (t: number) => boolean): number =>
    packets === 0 ? 0 : trains.filter(pred).reduce((a, b) => a + b, 0) / packets;
  return {
    trains: trains.length,
    packets,
    maxPackets: trains.reduce((a, b) => Math.max(a, b), 0),
    packetsInTrainsAtMostN: share((t) => t <= n),
    packetShareByBucket: TRAIN_BUCKETS.map(([lo, hi]) => share((t) => t >= lo && t <= hi)),
  };
}
