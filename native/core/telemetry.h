/*
 * One JSON line per response, with the field names and units of the Node server's
 * "media response" line (docs/server-contract.md), so the lab, the bench and the
 * tests read the edge's and the nginx module's logs with the same parser
 * (parseTelemetry).
 */
#ifndef SAMMY_TELEMETRY_H
#define SAMMY_TELEMETRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rate.h"
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
  /* How the body reached the socket: "sendfile" or "stream"; NULL without a body (null). */
  const char *body_path;
  /* From the response header being sent to the last byte leaving the socket. */
  double duration_ms;
  /* What was decided (rate.h): rtp, the applied rate, the outcome and the spiral guard's floor. */
  const sammy_rate_decision *rate;
  /* TCP_INFO when the request was read and when the response ended; a missing one gives nulls. */
  const sammy_tcp_info *start;
  const sammy_tcp_info *end;
  const char *remote_address;
  int remote_port;
  bool aborted;
  /* Empty when CMCD was clean (null). */
  const char *cmcd_problem;
  /* The edge's cache lookup: hit-fresh, hit-stale, miss, skipped; NULL leaves the field out. */
  const char *cache_lookup;
  /* The client's protocol ("http/1.1", "h2"); NULL leaves the field out (and streamId). */
  const char *protocol;
  /* The HTTP/2 stream's identifier; 0 (HTTP/1.x) is null, as the Node server's line has it. */
  int64_t stream_id;
  /* Which server wrote the line ("ats-edge", "nginx"). */
  const char *server;
} sammy_response_record;

/* Writes the line without a newline; returns its length, truncated to cap - 1 (never more than cap bytes written). */
size_t sammy_format_telemetry(const sammy_response_record *r, char *out, size_t cap);

#endif
