/*
 * The rate a response is paced at, decided the same way in every server: the Node
 * server (server/src/pacing.ts #decide, server/src/spiral-guard.ts), the Traffic
 * Server edge and the nginx module. Pure: it reads the request's CMCD (cmcd.h) and
 * the options, and touches no socket; each adapter applies what it says.
 *
 * Order (docs/server-contract.md): no body or no rtp -> unpaced; pacing off ->
 * disabled; no socket of its own to cap -> unavailable; otherwise the spiral guard
 * raises rtp to its floor, then the result is clamped to [min, max].
 */
#ifndef SAMMY_RATE_H
#define SAMMY_RATE_H

#include <stdbool.h>
#include <stdint.h>

#include "cmcd.h"
#include "options.h"

/* The outcome, as Server-Timing's `desc` and the telemetry line's `pacing` say it. */
typedef enum {
  /* SO_MAX_PACING_RATE is set to the applied rate for this response. */
  SAMMY_PACING_PACED,
  /* The request asked for no usable rate. */
  SAMMY_PACING_UNPACED,
  /* Pacing is off in this server (a control server). */
  SAMMY_PACING_DISABLED,
  /* A rate was asked for, but this response has no socket of its own to cap (HTTP/2), or setsockopt failed. */
  SAMMY_PACING_UNAVAILABLE,
} sammy_pacing_outcome;

const char *sammy_pacing_name(sammy_pacing_outcome outcome);

/* What the spiral guard did to a paced request. */
typedef enum { SAMMY_GUARD_OFF = 0, SAMMY_GUARD_NO_FLOOR, SAMMY_GUARD_KEPT, SAMMY_GUARD_RAISED } sammy_guard_action;

typedef struct {
  sammy_pacing_outcome outcome;
  /* rtp as requested, before clamping; 0 for none. */
  int64_t rtp_kbps;
  /* The rate applied (after the guard and clamping); 0 unless paced. */
  int64_t applied_rate_kbps;
  uint64_t rate_bytes_per_s;
  sammy_guard_action guard;
  /* The guard's floor (kbps) and the request field it came from ("sammy-floor", "tb" or "br"); 0 and NULL with no floor. */
  int64_t guard_floor_kbps;
  const char *guard_basis;
} sammy_rate_decision;

/* What the adapter knows about the response before deciding. */
typedef struct {
  /* The response has a body to pace (not HEAD, not 304, not an error without one). */
  bool has_body;
  /* The response alone writes to its socket (HTTP/1.x); false for an HTTP/2 stream or an internal request. */
  bool own_socket;
} sammy_response_facts;

sammy_rate_decision sammy_decide_rate(const sammy_rate_request *request, const sammy_options *options,
                                      sammy_response_facts facts);

/* A failed setsockopt turns a paced decision into an unavailable one (the response is sent unpaced). */
void sammy_rate_unavailable(sammy_rate_decision *decision);

/* The rate applied: the request clamped to [min, max] (kbps). */
int64_t sammy_clamp_rate_kbps(int64_t rtp_kbps, int64_t min_kbps, int64_t max_kbps);

/* CTA-5004 kbps (1000 bits/s) to bytes per second: the one conversion, as server/src/units.ts. */
uint64_t sammy_kbps_to_bytes_per_s(int64_t rate_kbps);

/*
 * The spiral guard's floor for a request (kbps): the floor the player declares
 * (`sammy-floor`) rounded up, else ceil(multiplier x tb), else x br; 0 when the
 * request names none of them (server/src/spiral-guard.ts guardFloor).
 */
int64_t sammy_guard_floor_kbps(const sammy_rate_request *request, double multiplier, const char **basis);

/*
 * The drain policy: how long to wait before looking again at a response's tail
 * still in the socket (TCP_INFO notsent_bytes): the expected remaining send time.
 * A paced tail (`rate_bytes_per_s`, the cap) cannot leave faster than the cap, so
 * the first look is when it can have left, at most SAMMY_PACED_DRAIN_POLL_MAX_MS
 * ahead: one or two looks per response. An unpaced tail's rate is a guess (the
 * kernel's delivery rate, else an assumed rate), so it is looked at again within
 * SAMMY_DRAIN_POLL_MAX_MS. Never sooner than SAMMY_DRAIN_POLL_MIN_MS.
 *
 * The policy and its constants are the Node server's (server/src/drain.ts: drainPollMs,
 * floored); native/test/core.test.ts fails if a value here differs from that file's.
 */
#define SAMMY_DRAIN_POLL_MIN_MS 1
#define SAMMY_DRAIN_POLL_MAX_MS 1000
#define SAMMY_PACED_DRAIN_POLL_MAX_MS 30000
/* Assumed send rate of an unpaced tail before the kernel has a delivery-rate sample. */
#define SAMMY_UNPACED_DRAIN_RATE_BYTES_PER_S 1000000ULL
/* A tail that has not moved for this long (a client that stopped reading) is released anyway. */
#define SAMMY_MAX_DRAIN_STALL_MS 120000

uint64_t sammy_drain_poll_ms(uint64_t notsent_bytes, uint64_t rate_bytes_per_s, uint64_t delivery_rate_bytes_per_s);

/*
 * The bytes the kernel sends back to back at this pacing rate (one TSO/GSO packet):
 * tcp_tso_autosize() and tcp_tso_segs() of net/ipv4/tcp_output.c with Linux's
 * default settings (tcp_min_tso_segs 2, tcp_tso_rtt_log 9, 64 KB GSO), as the Node
 * server's predictKernelTrainPackets (server/src/burst.ts) with its defaults. The
 * last skb a paced response sends moves the socket's next departure time this much
 * at the rate ahead.
 */
uint64_t sammy_kernel_train_bytes(uint64_t rate_bytes_per_s, uint32_t min_rtt_us, uint32_t mss_bytes);

#endif
