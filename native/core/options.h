/*
 * The pacing options every native adapter takes, with the Node server's defaults
 * and ranges (server/src/options.ts): one table, read by the Traffic Server
 * plugin from its remap rule (@pparam=--name=value) and by the nginx module from
 * its directives (sammy_<name with '_'> value), so both accept and refuse the
 * same values with the same words.
 */
#ifndef SAMMY_OPTIONS_H
#define SAMMY_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* 2^53 bits/s in kbps keeps every derived byte rate exact (the server's bound). */
#define SAMMY_MAX_RATE_KBPS 1000000000000LL

typedef struct {
  /* false: every response is served unpaced and says `disabled` (a control server). */
  bool pacing;
  /* Requested rates are clamped to [min_rate_kbps, max_rate_kbps]. */
  int64_t min_rate_kbps;
  int64_t max_rate_kbps;
  /* Never pace below spiral_guard_multiplier x the request's `tb` (else `br`): rate.h. */
  bool spiral_guard;
  double spiral_guard_multiplier;
  /* Read `?CMCD=` when a request has no CMCD header. */
  bool honour_query;
  /* CMCD longer than this (all header fields, or all query values) is ignored. */
  int64_t max_cmcd_bytes;
  /* Hold a paced body's last byte until the rest has left the socket, then lift the cap and send it. */
  bool tail_hold;
} sammy_options;

extern const sammy_options SAMMY_DEFAULT_OPTIONS;

/* Which options an adapter takes (the others are refused as unknown there). */
enum {
  SAMMY_OPT_PACING = 1 << 0,
  SAMMY_OPT_MIN_RATE = 1 << 1,
  SAMMY_OPT_MAX_RATE = 1 << 2,
  SAMMY_OPT_SPIRAL_GUARD = 1 << 3,
  SAMMY_OPT_SPIRAL_GUARD_MULTIPLIER = 1 << 4,
  SAMMY_OPT_QUERY_CMCD = 1 << 5,
  SAMMY_OPT_MAX_CMCD_BYTES = 1 << 6,
  SAMMY_OPT_TAIL_HOLD = 1 << 7,
  SAMMY_OPT_ALL = (1 << 8) - 1,
};

/*
 * Sets one option by its command-line name (`min-rate-kbps`, `spiral-guard`, ...;
 * '_' is read as '-') from its text. On a bad one, returns false and writes
 * "SAMMY_INVALID_OPTION: invalid --name: \"value\" (accepted: ...)" or
 * "SAMMY_BAD_ARGS: unknown option --name (options: ...)" into `error`; on success
 * adds the option's flag to `*set` (when not NULL).
 */
bool sammy_option_set(sammy_options *o, unsigned accepted, const char *name, size_t name_length, const char *value,
                      size_t value_length, unsigned *set, char *error, size_t error_size);

/* Takes every option not in `set` (the SAMMY_OPT_* flags set at the child's level) from `parent`. */
void sammy_options_merge(sammy_options *child, unsigned set, const sammy_options *parent);

/* What must hold between options once all are set (max >= min); false with the error written. */
bool sammy_options_check(const sammy_options *o, char *error, size_t error_size);

/*
 * Parses `--name=value` arguments (the Traffic Server remap rule's) over the
 * defaults, then checks them.
 */
bool sammy_parse_options(int argc, const char *const *argv, unsigned accepted, sammy_options *out, char *error,
                         size_t error_size);

#endif
