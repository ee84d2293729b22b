#include "rate.h"

#include <math.h>
#include <stddef.h>

const char *sammy_pacing_name(sammy_pacing_outcome outcome) {
  switch (outcome) {
  case SAMMY_PACING_PACED:
    return "paced";
  case SAMMY_PACING_DISABLED:
    return "disabled";
  case SAMMY_PACING_UNAVAILABLE:
    return "unavailable";
  case SAMMY_PACING_UNPACED:
  default:
    return "unpaced";
  }
}

int64_t sammy_clamp_rate_kbps(int64_t rtp_kbps, int64_t min_kbps, int64_t max_kbps) {
  if (rtp_kbps < min_kbps) return min_kbps;
  if (rtp_kbps > max_kbps) return max_kbps;
  return rtp_kbps;
}

uint64_t sammy_kbps_to_bytes_per_s(int64_t rate_kbps) { return (uint64_t)rate_kbps * 1000u / 8u; }

/* Rounded up, as the server's Math.ceil(kbps - 1e-9); beyond int64 it is clamped away anyway. */
static int64_t ceil_kbps(double kbps) {
  double rounded = ceil(kbps - 1e-9);
  return rounded >= 9.2e18 ? INT64_MAX : (int64_t)rounded;
}

int64_t sammy_guard_floor_kbps(const sammy_rate_request *request, double multiplier, const char **basis) {
  if (request->declared_floor_kbps > 0) {
    *basis = SAMMY_CMCD_DECLARED_FLOOR_KEY;
    return ceil_kbps(request->declared_floor_kbps);
  }
  *basis = request->top_bitrate_kbps > 0 ? "tb" : request->bitrate_kbps > 0 ? "br" : NULL;
  if (*basis == NULL) return 0;
  return ceil_kbps(multiplier * (request->top_bitrate_kbps > 0 ? request->top_bitrate_kbps : request->bitrate_kbps));
}

sammy_rate_decision sammy_decide_rate(const sammy_rate_request *request, const sammy_options *o,
                                      sammy_response_facts facts) {
  sammy_rate_decision d = {.outcome = SAMMY_PACING_UNPACED, .rtp_kbps = request->rtp_kbps};
  if (!facts.has_body || request->rtp_kbps <= 0) return d;
  if (!o->pacing) {
    d.outcome = SAMMY_PACING_DISABLED;
    return d;
  }
  if (!facts.own_socket) {
    d.outcome = SAMMY_PACING_UNAVAILABLE;
    return d;
  }
  int64_t kbps = request->rtp_kbps;
  if (o->spiral_guard) {
    d.guard_floor_kbps = sammy_guard_floor_kbps(request, o->spiral_guard_multiplier, &d.guard_basis);
    if (d.guard_basis == NULL) {
      d.guard = SAMMY_GUARD_NO_FLOOR;
    } else if (d.guard_floor_kbps > kbps) {
      d.guard = SAMMY_GUARD_RAISED;
      kbps = d.guard_floor_kbps;
    } else {
      d.guard = SAMMY_GUARD_KEPT;
    }
  }
  d.outcome = SAMMY_PACING_PACED;
  d.applied_rate_kbps = sammy_clamp_rate_kbps(kbps, o->min_rate_kbps, o->max_rate_kbps);
  d.rate_bytes_per_s = sammy_kbps_to_bytes_per_s(d.applied_rate_kbps);
  return d;
}

void sammy_rate_unavailable(sammy_rate_decision *d) {
  d->outcome = SAMMY_PACING_UNAVAILABLE;
  d->applied_rate_kbps = 0;
  d->rate_bytes_per_s = 0;
  d->guard = SAMMY_GUARD_OFF;
  d->guard_floor_kbps = 0;
  d->guard_basis = NULL;
}

uint64_t sammy_drain_poll_ms(uint64_t notsent_bytes, uint64_t rate_bytes_per_s, uint64_t delivery_rate_bytes_per_s) {
  uint64_t rate = rate_bytes_per_s > 0 ? rate_bytes_per_s : delivery_rate_bytes_per_s;
  if (rate == 0) rate = SAMMY_UNPACED_DRAIN_RATE_BYTES_PER_S;
  uint64_t max_ms = rate_bytes_per_s > 0 ? SAMMY_PACED_DRAIN_POLL_MAX_MS : SAMMY_DRAIN_POLL_MAX_MS;
  uint64_t wait_ms = notsent_bytes * 1000 / rate;
  if (wait_ms < SAMMY_DRAIN_POLL_MIN_MS) wait_ms = SAMMY_DRAIN_POLL_MIN_MS;
  if (wait_ms > max_ms) wait_ms = max_ms;
  return wait_ms;
}

/* Linux's defaults: sk_pacing_shift 10 (1 ms of the rate), tcp_tso_rtt_log 9, tcp_min_tso_segs 2, gso_max_size 64 KB. */
#define KERNEL_PACING_SHIFT 10
#define KERNEL_TSO_RTT_LOG 9
#define KERNEL_MIN_TSO_SEGS 2
#define KERNEL_GSO_MAX_SIZE 65536

uint64_t sammy_kernel_train_bytes(uint64_t rate_bytes_per_s, uint32_t min_rtt_us, uint32_t mss_bytes) {
  uint64_t bytes = rate_bytes_per_s >> KERNEL_PACING_SHIFT;
  uint32_t rtt_shift = min_rtt_us >> KERNEL_TSO_RTT_LOG;
  /* Below a millisecond or so of round trip, TCP adds up to 64 KB per skb (tcp_tso_autosize's RTT term). */
  if (rtt_shift < 32) bytes += KERNEL_GSO_MAX_SIZE >> rtt_shift;
  if (bytes > KERNEL_GSO_MAX_SIZE) bytes = KERNEL_GSO_MAX_SIZE;
  uint64_t mss = mss_bytes > 0 ? mss_bytes : 1;
  uint64_t segs = bytes / mss;
  if (segs < KERNEL_MIN_TSO_SEGS) segs = KERNEL_MIN_TSO_SEGS;
  return segs * mss;
}
