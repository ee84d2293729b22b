/** The bottleneck queue as a session's record holds it (the lab's queue-monitor.ts samples it). */

/**
 * [ms since the session's origin, backlog bytes, drops so far, bytes sent so far], and
 * on a trace link a fifth: how long the oldest queued packet has waited (ms).
 */
export type QueueSample = [number, number, number, number] | [number, number, number, number, number];

/**
 * The queueing delay a sample shows: on a trace link the oldest queued packet's wait
 * (its rate changes, so backlog / rate would not give it), else backlog / rate.
 */
export function queueDelayMsOf(q: QueueSample, rateMbps: number): number {
  return q.length === 5 ? q[4] : (q[1] * 8) / (rateMbps * 1e3);
}
