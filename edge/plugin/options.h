/*
 * The plugin's options, one remap rule's worth (remap.config: @pparam=--name=value).
 * Defaults and ranges are the Node server's (server/src/options.ts); the edge's
 * command line (edge/src/options.ts) checks the same ranges before it writes them.
 */
#ifndef SAMMY_EDGE_OPTIONS_H
#define SAMMY_EDGE_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* 2^53 bits/s in kbps keeps every derived byte rate exact (the server's bound). */
#define SAMMY_MAX_RATE_KBPS 1000000000000LL

typedef struct {
  /* Requested rates are clamped to [min_rate_kbps, max_rate_kbps]. */
  int64_t min_rate_kbps;
  int64_t max_rate_kbps;
  /* Read `?CMCD=` when a request has no CMCD header. */
  bool honour_query;
  /* CMCD longer than this (all header fields, or all query values) is ignored. */
  int64_t max_cmcd_bytes;
} sammy_edge_options;

extern const sammy_edge_options SAMMY_EDGE_DEFAULT_OPTIONS;

/*
 * Parses `--name=value` arguments over the defaults. On a bad one, returns false
 * and writes "SAMMY_EDGE_INVALID_OPTION: invalid --name: value (accepted: ...)"
 * into `error`.
 */
bool sammy_parse_options(int argc, const char *const *argv, sammy_edge_options *out, char *error, size_t error_size);

#endif
