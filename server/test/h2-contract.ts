/**
 * The HTTP/2 pacing rule (docs/server-contract.md "HTTP/2") as tests any server runs
 * against itself: the Node server (server/test/http2.test.ts) and nginx with the
 * module (nginx/test/h2.test.ts). One connection, a browser's windows; the server
 * serves /media/big.m4s (10 MB), /media/five.m4s (5 MB) and /media/one.m4s (1 MB).
 * Measured rates are printed, prefixed with the subject's name.
 */
import http2, { type ClientHttp2Session } from 'node:http2';
import type { ResponseTelemetry } from '../src/telemetry.js';
import {
  H2_MALFORMED_CMCD_CASES, H2_MARK_BYTES, MB, h2CancelMany, h2Get, h2ResetOneOfTwo, h2Rtp, h2Text, h2Together, measureUntil, metricValue, waitFor,
  type H2StreamResult, type H2Together,
} from './helpers.js';

export interface H2Subject {
  /** Printed before each figure ("h2", "nginx h2"). */
  name: string;
  /** The session the tests share (open, past its first unpaced segments). */
  session(): ClientHttp2Session;
  /** The server's line for a stream of that session. */
  lineOf(streamId: number): Promise<ResponseTelemetry>;
  /** Streams still holding pacing state on the server (a share, a timer): 0 when idle. */
  activeStreams(): Promise<number>;
}

const within = (value: number, target: number, tolerance: number): boolean => Math.abs(value / target - 1) < tolerance;
const mbps = (bytesPerS: number): string => (bytesPerS / MB).toFixed(2);

/** Defines the rule's tests in the calling describe. */
export function h2PacingContract(subject: H2Subject): void {
  const { name } = subject;

  test('one stream with rtp=40000 on 10 MB arrives at 5 MB/s (+-10%); its line: h2, paced, its stream, the cap', async () => {
    const session = subject.session();
    const paced = await measureUntil('one paced stream', () => h2Get(session, '/media/big.m4s', h2Rtp(40_000)), (r) => within(r.rateAfterMarkBytesPerS, 5 * MB, 0.1));
    // The held last byte goes once the rest has left: how long after the byte before it it arrived.
    const tailGapMs = paced.endMs - paced.at(paced.bytes - 1);
    console.log(`${name}, one stream at rtp=40000 (5 MB/s): ${mbps(paced.rateAfterMarkBytesPerS)} MB/s; its last byte ${tailGapMs.toFixed(1)} ms after the one before`);
    expect([paced.status, paced.bytes, paced.headers['server-timing']]).toEqual([200, 10 * MB, 'pace;dur=40000;desc="paced"']);
    expect(paced.rateAfterMarkBytesPerS / (5 * MB)).toBeGreaterThan(0.9);
    expect(paced.rateAfterMarkBytesPerS / (5 * MB)).toBeLessThan(1.1);
    expect(await subject.lineOf(paced.streamId)).toMatchObject({
      protocol: 'h2', pacing: 'paced', appliedRateKbps: 40_000, bytes: 10 * MB, aborted: false, maxPacingRateBytesPerS: 5 * MB, burstMechanism: 'kernel',
    });
  }, 30_000);

  test('two streams with rtp=20000 at once arrive together at 5 MB/s (+-10%), each at 2.5 MB/s (+-20%)', async () => {
    const good = (m: H2Together): boolean => within(m.togetherBytesPerS, 5 * MB, 0.1) && m.streams.every((r) => within(r.rateAfterMarkBytesPerS, 2.5 * MB, 0.2));
    const pair = await measureUntil('two paced streams', () => h2Together(subject.session(), '/media/five.m4s', [20_000, 20_000]), good);
    console.log(`${name}, two streams at rtp=20000: together ${mbps(pair.togetherBytesPerS)} MB/s, each ${pair.streams.map((r) => mbps(r.rateAfterMarkBytesPerS)).join(' and ')} MB/s`);
    expect(pair.togetherBytesPerS / (5 * MB)).toBeGreaterThan(0.9);
    expect(pair.togetherBytesPerS / (5 * MB)).toBeLessThan(1.1);
    for (const r of pair.streams) {
      expect(r.bytes).toBe(5 * MB);
      expect(r.rateAfterMarkBytesPerS / (2.5 * MB)).toBeGreaterThan(0.8);
      expect(r.rateAfterMarkBytesPerS / (2.5 * MB)).toBeLessThan(1.2);
    }
    // A line reports the cap just before its stream's share ended: the sum, or the other's alone once that one left.
    const lines = await Promise.all(pair.streams.map((r) => subject.lineOf(r.streamId)));
    expect(lines.map((t) => [t.pacing, t.aborted, [5 * MB, 2.5 * MB].includes(t.maxPacingRateBytesPerS as number)])).toEqual([
      ['paced', false, true],
      ['paced', false, true],
    ]);
  }, 30_000);

  test("unequal rtp (30000 + 10000): the sum holds; the split is the server's HTTP/2 frame order, not the rtp ratio (measured, printed)", async () => {
    const [fastShare, slowShare] = (await h2Together(subject.session(), '/media/five.m4s', [30_000, 10_000])).whileAllBytesPerS as [number, number];
    console.log(`${name}, rtp=30000 beside rtp=10000 (cap 5 MB/s): while both sent, ${mbps(fastShare)} and ${mbps(slowShare)} MB/s`);
    expect(fastShare + slowShare).toBeGreaterThan(0.8 * 5 * MB);
    expect(fastShare + slowShare).toBeLessThan(1.2 * 5 * MB);
  }, 30_000);

  test('a stream without rtp beside a paced one is not slowed to the paced rate', async () => {
    const session = subject.session();
    let unpaced: Promise<H2StreamResult> | null = null;
    // Paced at 1 MB/s; past its first MB the unpaced stream starts; the rest of the paced one would take seconds: it is cancelled.
    const paced = h2Get(session, '/media/big.m4s', h2Rtp(8000), (bytes, stream) => {
      if (bytes >= H2_MARK_BYTES && unpaced === null) {
        unpaced = h2Get(session, '/media/five.m4s');
        void unpaced.then(() => stream.close(http2.constants.NGHTTP2_CANCEL));
      }
    });
    const beside = await waitFor(() => unpaced, 10_000);
    await paced;
    console.log(`${name}, an unpaced 5 MB stream beside one at rtp=8000 (1 MB/s): ${mbps(beside.rateAfterMarkBytesPerS)} MB/s`);
    expect(beside.headers['server-timing']).toBe('pace;dur=0;desc="unpaced"');
    expect(beside.rateAfterMarkBytesPerS).toBeGreaterThan(4 * MB);
    expect(await subject.lineOf(beside.streamId)).toMatchObject({ pacing: 'unpaced', maxPacingRateBytesPerS: 'unlimited' });
  }, 30_000);

  test('a stream reset mid-body takes its share with it: the other goes on at its own rtp', async () => {
    // Two at rtp=20000 (cap 5 MB/s); the first is reset after 1 MB. Its share kept, the
    // other would run at 5 MB/s; taken before its queued bytes left, they would leave in the other's 2.5.
    const measure = () => h2ResetOneOfTwo(subject.session(), '/media/big.m4s', '/media/five.m4s', 20_000);
    const { survivor, cut } = await measureUntil('a reset stream', measure, (m) => within(m.survivor.rateAfterMarkBytesPerS, 2.5 * MB, 0.2));
    console.log(`${name}, after a stream at rtp=20000 is reset, the other (rtp=20000): ${mbps(survivor.rateAfterMarkBytesPerS)} MB/s`);
    expect(survivor.bytes).toBe(5 * MB);
    expect(survivor.rateAfterMarkBytesPerS / (2.5 * MB)).toBeGreaterThan(0.8);
    expect(survivor.rateAfterMarkBytesPerS / (2.5 * MB)).toBeLessThan(1.2);
    const line = await subject.lineOf(cut.streamId);
    expect(line).toMatchObject({ protocol: 'h2', pacing: 'paced', aborted: true });
    expect(line.bytes).toBeLessThan(10 * MB);
  }, 30_000);

  test('after the paced streams end, the next stream is unpaced (its line: no cap); no stream state is left', async () => {
    const session = subject.session();
    const paced = await h2Get(session, '/media/one.m4s', h2Rtp(8000));
    expect(paced.headers['server-timing']).toBe('pace;dur=8000;desc="paced"');
    const next = await h2Get(session, '/media/five.m4s');
    console.log(`${name}, the stream after a paced one (rtp=8000) ended: ${mbps(next.rateAfterMarkBytesPerS)} MB/s`);
    expect(next.rateAfterMarkBytesPerS).toBeGreaterThan(4 * MB);
    expect(await subject.lineOf(next.streamId)).toMatchObject({ protocol: 'h2', pacing: 'unpaced', maxPacingRateBytesPerS: 'unlimited', aborted: false });
    await waitFor(async () => ((await subject.activeStreams()) === 0 ? true : null));
  }, 30_000);

  test.each(H2_MALFORMED_CMCD_CASES)('malformed CMCD (%s) is ignored as over HTTP/1.1: served unpaced, noted, counted', async (header, problem) => {
    const session = subject.session();
    const countOf = async (): Promise<number> => metricValue(await h2Text(session, '/metrics'), 'sammy_errors_total{kind="cmcd"}') ?? 0;
    const before = await countOf();
    const res = await h2Get(session, '/media/one.m4s', { 'cmcd-status': header });
    expect([res.status, res.bytes, res.headers['server-timing']]).toEqual([200, MB, 'pace;dur=0;desc="unpaced"']);
    const line = await subject.lineOf(res.streamId);
    expect(line.pacing).toBe('unpaced');
    expect(line.cmcdProblem).toMatch(problem);
    expect(await countOf()).toBe(before + 1);
  });

  test('100 streams cancelled at once leave no state; the session serves on', async () => {
    const session = subject.session();
    h2CancelMany(session, '/media/one.m4s', h2Rtp(8000), 100);
    const after = await h2Get(session, '/media/one.m4s');
    expect([after.status, after.bytes]).toEqual([200, MB]);
    await waitFor(async () => ((await subject.activeStreams()) === 0 ? true : null));
  });
}
