import { neighbourDelayQueues, neighbourLink, PACED_BURST_KBITS, type Flow, type NeighbourLink } from '../src/neighbour.js';
import { constantTrace, parseStepsTrace } from '../src/trace.js';

/** 1000 kbit/s at 40 ms: a queue of 4 x 40 kbit, drained in 0.16 s; a neighbour of 110 kbit/s. */
const steady: NeighbourLink = neighbourLink(constantTrace(1000, 40));
const flow = (fromS: number, toS: number, capKbps: number | null): Flow => ({ fromS, toS, capKbps });
/** A steps trace of [seconds, kbps] at 40 ms, with a neighbour of 110 kbit/s. */
const stepsLink = (...steps: Array<[number, number]>): NeighbourLink =>
  neighbourLink(parseStepsTrace(steps.map(([durationS, bandwidthKbps]) => ({ durationS, bandwidthKbps })), 'steps', { defaultLatencyMs: 40 }), 110);

describe('the queue model', () => {
  test('the lab bottleneck: 4 x BDP at the mean rate, a neighbour at 11% of it', () => {
    expect(steady.queueKbits).toBeCloseTo(160, 9);
    expect(steady.neighbourKbps).toBeCloseTo(110, 9);
  });

  test('no video and a link faster than the neighbour: nothing waits', () => {
    expect(neighbourDelayQueues(steady, [], 0, 10, 'queue')).toBe(0);
  });

  test('an unpaced download fills the queue: the neighbour waits a full queue while it runs', () => {
    expect(neighbourDelayQueues(steady, [flow(0, 10, null)], 0, 10, 'queue')).toBeCloseTo(1, 9);
  });

  test('a paced download under the link holds only its burst, as often as it sends', () => {
    const queues = neighbourDelayQueues(steady, [flow(0, 10, 500)], 0, 10, 'queue');
    // 24 kbit ahead at 1000 kbit/s, in queues of 0.16 s.
    expect(queues).toBeCloseTo((PACED_BURST_KBITS * 0.5) / 1000 / 0.16, 9);
  });

  test('a pace under the link but over what the neighbour leaves fills the queue in time', () => {
    const under = neighbourDelayQueues(steady, [flow(0, 10, 800)], 0, 10, 'queue');
    const over = neighbourDelayQueues(steady, [flow(0, 10, 950)], 0, 10, 'queue');
    // 110 + 950 - 1000 = 60 kbit/s into the queue: full after 2.7 s.
    expect(over).toBeGreaterThan(0.6);
    // 800 + 110 stays under the link: only the burst.
    expect(under).toBeCloseTo((PACED_BURST_KBITS * 0.8) / 1000 / 0.16, 9);
    // The model before counted neither: both paces are under the link.
    expect(neighbourDelayQueues(steady, [flow(0, 10, 950)], 0, 10, 'link-filled')).toBe(0);
  });

  test('a fade below the neighbour fills the queue with its own packets, video or not', () => {
    const fade = stepsLink([2, 1000], [4, 50], [4, 1000]);
    expect(neighbourDelayQueues(fade, [], 0, 10, 'queue')).toBeGreaterThan(0.5);
    // The model before left the fade out.
    expect(neighbourDelayQueues(fade, [flow(0, 10, null)], 2, 6, 'link-filled')).toBe(0);
  });

  test('the queue a download leaves drains into the window after it', () => {
    const after = neighbourDelayQueues(steady, [flow(0, 1, null)], 1, 2, 'queue');
    // 160 kbit drain at 1000 - 110 kbit/s: about 0.18 s of the second.
    expect(after).toBeGreaterThan(0.02);
    expect(after).toBeLessThan(0.2);
  });
});

describe('the link-filled model (before)', () => {
  const steps = { ...stepsLink([1, 1000], [2, 0], [2, 4000]), neighbourKbps: 500 };

  test('the seconds a download fills the link, each weighted by the mean rate over the rate then', () => {
    // Mean 1800 kbps over the pass of 5 s: the 1000 kbps second counts 1.8, the two 4000 kbps seconds 0.45 each, the gap nothing.
    const meanKbps = steps.meanKbps;
    expect(neighbourDelayQueues(steps, [flow(0, 5, null)], 0, 5, 'link-filled')).toBeCloseTo((meanKbps / 1000 + (2 * meanKbps) / 4000) / 5, 9);
    // Paced at 2000 kbps the download fills only the 1000 kbps step.
    expect(neighbourDelayQueues(steps, [flow(0, 5, 2000)], 0, 5, 'link-filled')).toBeCloseTo(meanKbps / 1000 / 5, 9);
    // Steps no faster than the neighbour it fills by itself: they do not count.
    expect(neighbourDelayQueues({ ...steps, neighbourKbps: 1000 }, [flow(0, 5, null)], 0, 5, 'link-filled')).toBeCloseTo((2 * meanKbps) / 4000 / 5, 9);
  });
});
