// The bench's train counting (bench/trains.ts), on tcpdump text of known shape.
import { parseTcpdump, summarizeTrains, trainLengths } from '../bench/trains.js';

const line = (s: number, ns: number, len: number, dport = 40000): string =>
  `${s}.${String(ns).padStart(9, '0')} IP 10.77.0.1.8080 > 10.77.0.2.${dport}: Flags [.], seq 1:2, ack 1, win 502, length ${len}`;

test('frames closer than 50 us form one train; a GSO frame counts as its segments', () => {
  const text = [
    line(100, 0, 1448), // skipped: first packet of the flow
    line(100, 1_000_000, 1448),
    line(100, 1_010_000, 2896), // 10 us later: same train, 2 packets
    line(100, 2_000_000, 5792), // 1 ms later: a new train of 4
    line(100, 3_000_000, 0), // a pure ACK: ignored
    line(100, 3_000_000, 1448, 40001), // another flow: skipped, then a train of 1
    line(100, 4_000_000, 1448, 40001),
    'garbage line',
  ].join('\n');
  const frames = parseTcpdump(text);
  expect(frames).toHaveLength(6);
  const trains = trainLengths(frames, 1448, 1);
  expect(trains.sort()).toEqual([1, 3, 4]);
  const s = summarizeTrains(trains, 3);
  expect(s).toMatchObject({ trains: 3, packets: 8, maxPackets: 4 });
  expect(s.packetsInTrainsAtMostN).toBeCloseTo(4 / 8);
  expect(s.packetShareByBucket.slice(0, 4)).toEqual([1 / 8, 0, 3 / 8, 4 / 8]);
});
