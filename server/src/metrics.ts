// Prometheus metrics (GET /metrics). One registry per app, so tests can build
// many apps in one process.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

const RATE_BUCKETS_KBPS = [250, 500, 1000, 2000, 4000, 8000, 16_000, 32_000, 64_000, 128_000, 1_000_000];

export interface ServerMetrics {
  registry: Registry;
  requests: Counter<'route' | 'status'>;
  mediaBytes: Counter;
  pacedResponses: Counter<'mechanism'>;
  /** Paced responses the spiral guard raised to its floor, by the request field the floor came from (tb, br). */
  spiralGuardRaised: Counter<'basis'>;
  /** body_path: sendfile (the kernel from the file) or stream (through Node's buffers). */
  bodyResponses: Counter<'body_path'>;
  activeResponses: Gauge;
  /** HTTP/2 streams holding pacing state (a share of their connection's cap, a line still to write). */
  activeH2Streams: Gauge;
  requestedRateKbps: Histogram;
  achievedRateKbps: Histogram;
  achievedRatio: Histogram;
  /** kind: bad_path, refused_file, client (unparsable request heads), tls (failed handshakes), cmcd, setsockopt, tcp_info, sendfile, server. */
  errors: Counter<'kind'>;
}

export function createMetrics(): ServerMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'sammy_', eventLoopMonitoringPrecision: 100 });
  const registers = [registry];
  return {
    registry,
    requests: new Counter({ name: 'sammy_http_requests_total', help: 'HTTP requests answered', labelNames: ['route', 'status'], registers }),
    mediaBytes: new Counter({ name: 'sammy_media_bytes_total', help: 'Media response body bytes sent', registers }),
    pacedResponses: new Counter({
      name: 'sammy_paced_responses_total',
      help: 'Media responses sent with SO_MAX_PACING_RATE, by burst mechanism',
      labelNames: ['mechanism'],
      registers,
    }),
    spiralGuardRaised: new Counter({
      name: 'sammy_spiral_guard_raised_total',
      help: "Paced responses whose rtp the spiral guard raised to its floor (the declared sammy-floor, else multiplier x CMCD tb, else br), by the floor's basis",
      labelNames: ['basis'],
      registers,
    }),
    bodyResponses: new Counter({
      name: 'sammy_media_body_responses_total',
      help: 'Media responses with a body, by the path that sent it (sendfile: by the kernel from the file; stream: through Node)',
      labelNames: ['body_path'],
      registers,
    }),
    activeResponses: new Gauge({
      name: 'sammy_media_responses_active',
      help: 'Media responses whose bytes have not all left the socket (each holds pacing state)',
      registers,
    }),
    activeH2Streams: new Gauge({
      name: 'sammy_h2_streams_active',
      help: 'HTTP/2 streams whose bytes have not all left their connection (each holds a share of its cap)',
      registers,
    }),
    requestedRateKbps: new Histogram({
      name: 'sammy_pace_requested_kbps',
      help: 'Rate applied to paced responses (CMCD rtp clamped to [min, max]), kbps',
      buckets: RATE_BUCKETS_KBPS,
      registers,
    }),
    achievedRateKbps: new Histogram({
      name: 'sammy_pace_achieved_kbps',
      help: 'Body bytes over send time of completed paced responses, kbps',
      buckets: RATE_BUCKETS_KBPS,
      registers,
    }),
    achievedRatio: new Histogram({
      name: 'sammy_pace_achieved_ratio',
      help: 'Achieved over applied rate of completed paced responses (short responses exceed 1: the first 10 segments are never paced)',
      buckets: [0.5, 0.8, 0.9, 0.95, 1, 1.05, 1.1, 1.25, 1.5, 2, 4],
      registers,
    }),
    errors: new Counter({ name: 'sammy_errors_total', help: 'Rejected or failed inputs and operations, by kind', labelNames: ['kind'], registers }),
  };
}
