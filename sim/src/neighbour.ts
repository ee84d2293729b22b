/**
 * How much a session delays a neighbour flow sharing the bottleneck. The simulator's
 * link has no queue of its own, so this scores a session afterwards, from the times
 * its downloads ran (`Flow`) and the trace. Two models:
 *
 * - `queue` (the default): a fluid droptail queue of the lab's size (4 x BDP at the
 *   trace's mean rate) in front of the trace, fed by the neighbour's own constant
 *   rate and the video's, drained at the trace's rate. A paced download offers its
 *   pace (TCP's window grows until the queue is full when that is more than the link
 *   leaves), an unpaced one fills the queue while it runs, and a paced one under the
 *   link still holds the burst it sends at a time. A neighbour's packet waits for the
 *   queue ahead of it to drain, fades and outages included; packets a full queue drops
 *   are not counted, as the lab counts only the packets that arrive.
 * - `link-filled` (the model before, kept to compare): the seconds a download ran at
 *   the link's full capacity (its pace at or above the trace's rate), each weighted by
 *   the trace's mean rate over the rate then, leaving out steps no faster than the
 *   neighbour. It ignored the neighbour's traffic and a pace under the link.
 *
 * Both give a mean delay over a window in full queues at the trace's mean rate (with
 * the lab's 4 x BDP at 40 ms, 1 is 160 ms). sim/results/neighbour-model/ checks them
 * against the lab's UDP neighbour, start by start.
 */
import { SimError } from './errors.js';
import { latencyAtS, meanBandwidthKbps, transferEndS, walkSteps, type Trace } from './trace.js';

export const NEIGHBOUR_MODELS = ['queue', 'link-filled'] as const;
export type NeighbourModel = (typeof NEIGHBOUR_MODELS)[number];
export const DEFAULT_NEIGHBOUR_MODEL: NeighbourModel = 'queue';

/**
 * A neighbour sharing the bottleneck, as a share of the trace's mean rate: the lab's
 * UDP neighbours send 5 of the thesis link's 40 Mbit/s and 0.5 of the LTE trace's 4.6.
 */
export const NEIGHBOUR_MEAN_SHARE = 0.11;
/** The lab's bottleneck queue, in bandwidth-delay products at the trace's mean rate (docs/DESIGN: 4 x BDP). */
export const QUEUE_BDPS = 4;
/** What a paced download puts in the queue at a time: the server's burst of 4 packets of 1500 bytes. */
export const PACED_BURST_KBITS = (4 * 1500 * 8) / 1000;
/** The longest piece of time over which the queue model takes the delay as constant. */
const PIECE_S = 0.05;

/** A stretch in which a download's bytes flowed, paced at `capKbps` (null: unpaced). */
export interface Flow {
  fromS: number;
  toS: number;
  capKbps: number | null;
}

/** The bottleneck and the neighbour a session is scored against. */
export interface NeighbourLink {
  trace: Trace;
  meanKbps: number;
  neighbourKbps: number;
  queueKbits: number;
}

/** The lab's bottleneck for a trace: its mean rate, a neighbour at NEIGHBOUR_MEAN_SHARE of it, a queue of QUEUE_BDPS at the first step's round trip. */
export function neighbourLink(trace: Trace, neighbourKbps?: number): NeighbourLink {
  const meanKbps = meanBandwidthKbps(trace);
  return { trace, meanKbps, neighbourKbps: neighbourKbps ?? NEIGHBOUR_MEAN_SHARE * meanKbps, queueKbits: QUEUE_BDPS * meanKbps * latencyAtS(trace, 0) };
}

/**
 * The mean delay the neighbour's packets sent in [fromS, toS) wait, in full queues at
 * the mean rate (`queue`), or the mean delay the video adds to it (`link-filled`).
 * `flows` are in time order and do not overlap (one download at a time).
 */
export function neighbourDelayQueues(link: NeighbourLink, flows: readonly Flow[], fromS: number, toS: number, model: NeighbourModel): number {
  if (!(toS > fromS) || fromS < 0) throw new SimError('SIM_BAD_ARGS', `a neighbour window must be 0 <= from < to, got [${fromS}, ${toS})`);
  return model === 'queue' ? queueModelQueues(link, flows, fromS, toS) : linkFilledQueues(link, flows, fromS, toS);
}

function linkFilledQueues(link: NeighbourLink, flows: readonly Flow[], fromS: number, toS: number): number {
  let heldS = 0;
  for (const f of flows) {
    const a = Math.max(f.fromS, fromS);
    const b = Math.min(f.toS, toS);
    if (b <= a) continue;
    walkSteps(link.trace, a, b, (bandwidth, s) => {
      if (bandwidth > link.neighbourKbps && (f.capKbps === null || bandwidth <= f.capKbps)) heldS += (s * link.meanKbps) / bandwidth;
    });
  }
  return heldS / (toS - fromS);
}

function queueModelQueues(link: NeighbourLink, flows: readonly Flow[], fromS: number, toS: number): number {
  const { trace, neighbourKbps, queueKbits } = link;
  // Every time the video's offered rate changes, and the window's start.
  const edges = [0, fromS, toS, ...flows.flatMap((f) => [f.fromS, f.toS])].filter((t) => t >= 0 && t <= toS).sort((a, b) => a - b);
  let queue = 0;
  let flowAt = 0;
  let delayWeightedS = 0;
  let weightS = 0;
  for (let i = 0; i + 1 < edges.length; i++) {
    const a = edges[i]!;
    const b = edges[i + 1]!;
    if (b <= a) continue;
    while (flowAt < flows.length && flows[flowAt]!.toS <= a) flowAt++;
    const flow = flowAt < flows.length && flows[flowAt]!.fromS <= a ? flows[flowAt]! : null;
    const offeredKbps = flow === null ? 0 : (flow.capKbps ?? Infinity);
    const counted = a >= fromS;
    walkSteps(trace, a, b, (bandwidth, seconds, atS) => {
      for (let done = 0; done < seconds - 1e-12; ) {
        const h = Math.min(PIECE_S, seconds - done);
        const growth = offeredKbps === Infinity ? Infinity : (neighbourKbps + offeredKbps - bandwidth) * h;
        const mid = Math.min(queueKbits, Math.max(0, queue + growth / 2));
        queue = Math.min(queueKbits, Math.max(0, queue + growth));
        if (counted) {
          const midS = atS + done + h / 2;
          // A paced download under the link still has its burst in the queue as often as it sends.
          const burst = offeredKbps > 0 && offeredKbps < Infinity && bandwidth > 0 ? PACED_BURST_KBITS * Math.min(1, offeredKbps / bandwidth) : 0;
          const ahead = Math.max(mid, burst);
          const waitS = ahead > 0 ? transferEndS(trace, midS, ahead, null) - midS : 0;
          // A full queue takes the neighbour's packets only as fast as it drains (droptail).
          const full = mid >= queueKbits - 1e-9;
          const accepted = full ? Math.min(1, bandwidth / (neighbourKbps + Math.min(offeredKbps, bandwidth))) : 1;
          delayWeightedS += waitS * accepted * h;
          weightS += accepted * h;
        }
        done += h;
      }
    });
  }
  if (weightS === 0) return 0;
  return delayWeightedS / weightS / (queueKbits / link.meanKbps);
}
