/*
 * One JSON line per response, with the field names and units of the Node server's
 * "media response" line (docs/server-contract.md), so the lab, the bench and the
 * tests read the edge's log with the same parser (parseTelemetry).
 */
#ifndef SAMMY_TELEMETRY_H
#define SAMMY_TELEMETRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "socket.h"

typedef struct {
  /* Milliseconds since the epoch when the line is written. */
  int64_t time_ms;
  /* URL path without the query (may hold any byte: it is escaped). */
  const char *path;
  size_t path_length;
  int status;
  /* Response body bytes written to the client. */
  int64_t bytes;
  /* From the response header being sent to the last byte leaving the socket. */
  double duration_ms;
  /* As requested, before clamping; 0 for none (null in the line). */
  int64_t rtp_kbps;
  /* After clamping; 0 when unpaced (null). */
  int64_t applied_rate_kbps;
  /* paced, unpaced or unavailable (as Server-Timing's desc). */
  const char *pacing;
  /* TCP_INFO when the request was read and when the response ended; a missing one gives nulls. */
  const sammy_tcp_info *start;
  const sammy_tcp_info *end;
  const char *remote_address;
  int remote_port;
  bool aborted;
  /* Empty when CMCD was clean (null). */
  const char *cmcd_problem;
  /* The cache lookup: hit-fresh, hit-stale, miss, skipped, or NULL when there was none. */
  const char *cache_lookup;
} sammy_response_record;

/* Writes the line without a newline; returns its length, truncated to cap - 1 (never more than cap bytes written). */
size_t sammy_format_telemetry(const sammy_response_record *r, char *out, size_t cap);

#endif
