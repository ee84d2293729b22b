/**
 * A trace link at run time: restarting the delay line's trace (at every play request)
 * and the run's calibration of the link against its trace (src/scenario/trace.ts holds
 * the schedule and the fidelity it is judged by).
 */
import { writeFileSync } from 'node:fs';
import { LabError } from '../lab-error.js';
import { capacityPerBin, cumulativeAt, traceFidelity, type OpportunitySchedule, type TraceFidelity } from '../scenario/trace.js';
import type { startNeighbour } from './neighbours.js';
import { sleep } from './processes.js';
import { parseDelaySamples, type DelaySample } from './queue-monitor.js';
import type { TraceLine } from './topology.js';

/**
 * Restarts the delay line's trace now, at trace time `atS` (0: the trace's start);
 * resolves with the epoch ms it printed. The start goes through the line's start file,
 * written just before the signal, in whole microseconds.
 */
export async function restartTrace(line: TraceLine, atS = 0): Promise<number> {
  if (!Number.isFinite(atS) || atS < 0) throw new LabError('LAB_TRACE_RESTART', `a trace restarts at a non-negative trace time, got ${atS} s`);
  const atUs = Math.round(atS * 1e6);
  writeFileSync(line.startFile, `${atUs}\n`);
  const delayLine = line.process;
  const offset = delayLine.stdout().length;
  const printed = () => /(?:^|\n)restart(?: (\d+) (\d+)|-refused (.*))\n/.exec(delayLine.stdout().slice(offset));
  delayLine.child.kill('SIGUSR1');
  const deadline = Date.now() + 5000;
  for (let m = printed(); ; m = printed()) {
    if (m?.[3] !== undefined || (m && Number(m[2]) !== atUs)) {
      throw new LabError('LAB_TRACE_RESTART', `the delay line did not restart its trace at ${atUs} us (${m[3] ?? `it started at ${m[2]} us`})`);
    }
    if (m) return Number(m[1]);
    if (delayLine.child.exitCode !== null || Date.now() > deadline) {
      throw new LabError('LAB_TRACE_RESTART', `the delay line did not restart its trace (${delayLine.stderr().trim() || 'no answer to SIGUSR1 within 5 s'})`);
    }
    await sleep(5);
  }
}

/**
 * The run's calibration of a trace link: one saturating TCP Reno flow from the server
 * side for `seconds` from a restart of the trace; compares, per second, the bytes the
 * bottleneck served and the receiver got with the trace's capacity.
 */
export async function calibrateTraceLink(o: {
  delayLine: TraceLine; schedule: OpportunitySchedule; traceName: string; seconds: number; startFlow: (durationS: number) => ReturnType<typeof startNeighbour>;
}): Promise<TraceFidelity> {
  const binS = 1;
  const skippedS = 1;
  const offset = o.delayLine.process.stdout().length;
  const flow = await o.startFlow(o.seconds + 1);
  const restartMs = await restartTrace(o.delayLine);
  await sleep(o.seconds * 1000 + 300);
  const raw = await flow.finish({ startMs: restartMs, endMs: restartMs + o.seconds * 1000, startS: 0, endS: o.seconds });
  const afterRestart = o.delayLine.process.stdout().slice(offset);
  const samples: DelaySample[] = parseDelaySamples(afterRestart.slice(afterRestart.indexOf(`restart ${restartMs}`)));
  const servedCurve = samples.map((q) => [q.traceUs / 1e6, q.servedBytes] as [number, number]);
  const receivedCurve = raw.kind === 'tcp' ? raw.samples.map(([ms, bytes]) => [ms / 1000, bytes] as [number, number]) : [];
  const bins = Math.floor(o.seconds / binS);
  const capacity = capacityPerBin(o.schedule, binS * 1e6, bins).slice(skippedS / binS);
  const per = (curve: Array<[number, number]>) =>
    capacity.map((_, k) => {
      const from = cumulativeAt(curve, skippedS + k * binS);
      const to = cumulativeAt(curve, skippedS + (k + 1) * binS);
      return from === null || to === null ? null : to - from;
    });
  return traceFidelity({ trace: o.traceName, calibrationS: o.seconds, skippedS, binS, capacity, served: per(servedCurve), received: per(receivedCurve) });
}
