import { parseTelemetry, type ResponseTelemetry } from '@sammy/server/telemetry';
import type { SessionQoE } from '@sammy/player/abr';
import { flowThroughputMbps } from '../../src/designs/common.js';
import { parseHttpLines, parseTcpLines, parseUdpLines } from '../../src/lab/neighbours.js';
import { neighbourMetrics, tcpThroughputMbps } from '../../src/scenario/neighbour-kinds.js';
import { ownerPid } from '../../src/lab/netns.js';
import { parseTcQdisc } from '../../src/lab/queue-monitor.js';
import { armOrder } from '../../src/lab/runner.js';
import { parsePingSummary } from '../../src/lab/topology.js';
import { compactTelemetry, linkThroughputSeries, throughputSeries, videoMetrics } from '../../src/analysis/video-metrics.js';

describe('neighbour output parsing and metrics', () => {
  test('UDP: one-way delay from send and kernel receive timestamps, loss from the sent count', () => {
    const origin = 1_700_000_000_000;
    const ns = (ms: number) => String(BigInt(Math.round(ms * 1e6)));
    const text = ['ready', `0 ${ns(origin + 10)} ${ns(origin + 12.5)}`, `1 ${ns(origin + 12)} ${ns(origin + 16)}`, `2 ${ns(origin + 9000)} ${ns(origin + 9100)}`, 'garbage'].join('\n');
    const packets = parseUdpLines(text, origin);
    expect(packets).toEqual([[10, 2.5], [12, 4], [9000, 100]]);
    const m = neighbourMetrics({ kind: 'udp', rateKbps: 5000, packetBytes: 1200, sent: 4, packets }, 5000);
    expect(m.udpOwdMs).toBeCloseTo(3.25);
    expect(m.udpLossPct).toBe(25);
  });

  test('TCP: throughput over the window, interpolated between receiver samples', () => {
    const samples = parseTcpLines(['ready', '1000 0', '2000 1250000', '3000 2500000', 'end'].join('\n'), 0);
    expect(samples).toEqual([[1000, 0], [2000, 1_250_000], [3000, 2_500_000]]);
    // 2.5 MB over a 3 s window = 6.67 Mbit/s; half a second in: 0 bytes.
    expect(neighbourMetrics({ kind: 'tcp', congestionControl: 'reno', sentBytes: null, samples }, 3000).tcpThroughputMbps).toBeCloseTo(6.667, 2);
    expect(neighbourMetrics({ kind: 'tcp', congestionControl: 'reno', sentBytes: null, samples }, 1500).tcpThroughputMbps).toBeCloseTo((625_000 * 8) / 1.5 / 1e6, 3);
  });

  test('TCP: a record cut short (its sink killed mid-write) ends at its last whole sample and counts up to it', () => {
    expect(parseTcpLines('1000 0\n2000 1250000\n3000 25', 0)).toEqual([[1000, 0], [2000, 1_250_000]]);
    // Results written before whole lines were required hold the cut sample; the counter never falls, so it ends the record.
    const cut: Array<[number, number]> = [[1000, 0], [2000, 1_250_000], [3000, 25]];
    expect(tcpThroughputMbps(cut, 1000, 5000)).toBeCloseTo(10, 9); // 1.25 MB in the 1 s recorded
    expect(flowThroughputMbps({ kind: 'tcp', congestionControl: 'bbr', sentBytes: null, samples: cut }, 5000, 1000)).toBeCloseTo(10, 9);
    expect(tcpThroughputMbps([[1000, 0]], 1000, 5000)).toBeNull();
  });

  test("HTTP loop in a design: completed responses pro rata over the window; none completed is unknown, not zero", () => {
    const raw = { kind: 'http' as const, responseBytes: 3e6, requests: [[0, 2000, 3e6], [2000, 2000, 3e6]] as Array<[number, number, number]> };
    expect(flowThroughputMbps(raw, 4000, 1000)).toBeCloseTo((4.5e6 * 8) / 3 / 1e6, 9); // half the first, all the second, in 3 s
    expect(flowThroughputMbps({ ...raw, requests: [] }, 4000, 1000)).toBeNull();
  });

  test('HTTP: only requests that finish inside the window count', () => {
    const text = [
      JSON.stringify({ startMs: 100, endMs: 1100, bytes: 3e6, status: 200 }),
      JSON.stringify({ startMs: 1100, endMs: 1900, bytes: 3e6, status: 200 }),
      JSON.stringify({ startMs: 1900, endMs: 3200, bytes: 3e6, status: 200 }),
      JSON.stringify({ startMs: 50, endMs: 60, bytes: 0, status: 500 }),
    ].join('\n');
    const requests = parseHttpLines(text, 100);
    expect(requests).toEqual([[0, 1000, 3e6], [1000, 800, 3e6], [1800, 1300, 3e6]]);
    expect(neighbourMetrics({ kind: 'http', responseBytes: 3e6, requests }, 3000)).toEqual({ httpResponseMs: 900, httpRequests: 2 });
  });
});

describe('system output parsing', () => {
  test('ping summary', () => {
    const out = '40 packets transmitted, 40 received, 0% packet loss, time 1999ms\nrtt min/avg/max/mdev = 5.186/5.256/5.857/0.073 ms\n';
    expect(parsePingSummary(out)).toEqual({ minMs: 5.186, avgMs: 5.256, maxMs: 5.857, mdevMs: 0.073, count: 40 });
    expect(parsePingSummary('connect: Network is unreachable')).toBeNull();
  });

  test('tc -s -j qdisc', () => {
    const json = '[{"kind":"tbf","handle":"8002:","root":true,"bytes":123,"packets":1,"drops":7,"backlog":4500,"qlen":3}]';
    expect(parseTcQdisc(json)).toEqual({ backlogBytes: 4500, drops: 7, sentBytes: 123 });
    expect(parseTcQdisc('not json')).toBeNull();
  });

  test('namespace owner pid', () => {
    expect(ownerPid('slab-1234-2-rtr')).toBe(1234);
    expect(ownerPid('sbench-1234-a')).toBeNull();
    expect(ownerPid('slabx-1234-rtr')).toBeNull();
  });

  test('arm order rotates per trial', () => {
    const arms = ['control', 'sammy', 'fixed4x'] as const;
    expect(armOrder([...arms], 1)).toEqual(['control', 'sammy', 'fixed4x']);
    expect(armOrder([...arms], 2)).toEqual(['sammy', 'fixed4x', 'control']);
    expect(armOrder([...arms], 4)).toEqual(['control', 'sammy', 'fixed4x']);
  });
});

function line(o: Partial<ResponseTelemetry>): ResponseTelemetry {
  return {
    msg: 'media response', time: 0, path: '/media/chunk-4-00001.m4s', status: 200, bytes: 0, bodyPath: 'sendfile', durationMs: 0, rtpKbps: null, appliedRateKbps: null,
    pacing: 'unpaced', achievedRateKbps: null, burstPackets: 4, burstMechanism: null, trainPackets: null, rttUs: null, minRttUs: null,
    retransmits: null, totalRetrans: null, deliveryRateBytesPerS: null, bytesRetrans: null, bytesSent: null, maxPacingRateBytesPerS: null,
    cwndPackets: null, remoteAddress: null, remotePort: null, aborted: false, cmcdProblem: null,
    guardFloorKbps: null, guardBasis: null, guardRaised: false, ...o,
  };
}

describe('video metrics', () => {
  const origin = 1_000_000;
  const telemetry = [
    line({ time: origin + 1000, bytes: 500_000, durationMs: 1000, rttUs: 20_000, retransmits: 2, bytesRetrans: 3000, bytesSent: 510_000 }),
    line({ time: origin + 3000, bytes: 250_000, durationMs: 500, rttUs: 6_000, retransmits: 0, bytesRetrans: 0, bytesSent: 255_000, rtpKbps: 4000, appliedRateKbps: 4000 }),
    line({ time: origin + 3100, path: '/media/init-4.m4s', bytes: 0, durationMs: 1, rttUs: 5_000 }),
  ];
  const rows = compactTelemetry(telemetry, origin);

  test('server log lines are read back; other lines and torn lines are skipped', () => {
    const text = [JSON.stringify({ msg: 'server listening' }), ...telemetry.map((t) => JSON.stringify(t)), '{"msg":"media response","pa'].join('\n');
    expect(parseTelemetry(text)).toHaveLength(3);
  });

  test('RTT per response, retransmitted share of bytes, QoE from the player', () => {
    const qoe = {
      arm: 'sammy', playDelayS: 0.8, rebufferCount: 0, rebufferS: 0, avgBitrateKbps: 1050, avgQuality: 0.95, switchCount: 1,
      initialThroughputKbps: 30_000, chunkThroughputKbps: null, config: {},
      chunks: [
        { index: 0, rung: 0, bitrateKbps: 150, sizeBytes: 1, downloadS: 1, throughputKbps: 30_000, phase: 'initial', rtpKbps: null, appliedRateKbps: null, bufferBeforeS: 0, bufferAfterS: 2 },
        { index: 1, rung: 4, bitrateKbps: 1050, sizeBytes: 1, downloadS: 1, throughputKbps: 8000, phase: 'playing', rtpKbps: 9000, appliedRateKbps: 9000, bufferBeforeS: 2, bufferAfterS: 4 },
        { index: 2, rung: 4, bitrateKbps: 1050, sizeBytes: 1, downloadS: 1, throughputKbps: 6000, phase: 'playing', rtpKbps: 7000, appliedRateKbps: 7000, bufferBeforeS: 4, bufferAfterS: 6 },
      ],
    } as SessionQoE;
    const m = videoMetrics(qoe, rows.slice(0, 2), [[0, 50_000, 0, 0], [100, 0, 0, 0]], 40);
    expect(m.videoRttMs).toBeCloseTo(13);
    expect(m.retransPct).toBeCloseTo((100 * 3000) / 765_000);
    // The player's own figure is null here, so the playing-phase chunks decide.
    expect(m.chunkThroughputKbps).toBe(7000);
    expect(m.meanRtpKbps).toBe(8000);
    // Mean backlog 25 kB at 40 Mbit/s = 5 ms.
    expect(m.queueDelayMs).toBeCloseTo(5);
    expect(m.playDelayS).toBe(0.8);
    // No chunk says which protocol carried it: no HTTP/2 fraction.
    expect(m.h2ChunkFraction).toBeNull();
    const tagged = { ...qoe, chunks: qoe.chunks.map((c, i) => ({ ...c, ...(i === 0 ? {} : { protocol: i === 1 ? 'h2' : 'http/1.1' }) })) };
    expect(videoMetrics(tagged, rows.slice(0, 2), [], 40).h2ChunkFraction).toBe(0.5);
  });

  test('throughput over time spreads each response over its duration', () => {
    const series = throughputSeries(rows.slice(0, 2), 0.5);
    // 500 kB over 0-1 s = 4 Mbit/s; 250 kB over 2.5-3 s = 4 Mbit/s.
    expect(series).toEqual([[0, 4], [0.5, 4], [1, 0], [1.5, 0], [2, 0], [2.5, 4]]);
  });

  test('link throughput from the qdisc byte counter', () => {
    expect(linkThroughputSeries([[0, 0, 0, 0], [100, 0, 0, 500_000], [200, 0, 0, 500_000]])).toEqual([[0.1, 40], [0.2, 0]]);
  });
});
