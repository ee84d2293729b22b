/*
 * The player's requested maximum throughput (CTA-5004 `rtp`) from one request, and
 * what it says about its stream (`tb`, `br`, `sammy-floor`), by the rules of the Node server
 * (server/src/cmcd.ts, docs/server-contract.md): header form wins over query form,
 * a payload of a newer CMCD version is ignored, rtp must be a positive integer
 * (kbps), anything malformed is ignored with a note. No server's types here: each
 * adapter passes in the header values and the raw query, the tests do the same.
 */
#ifndef SAMMY_CMCD_H
#define SAMMY_CMCD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The newest CMCD version understood (CTA-5004-B). */
#define SAMMY_CMCD_MAX_VERSION 2
/* CMCD headers (or query values) longer than this, together, are ignored (the server's limits.maxCmcdBytes). */
#define SAMMY_CMCD_DEFAULT_MAX_BYTES 2048

/*
 * The custom key with which a player declares the least rate its own bitrate rule
 * needs (kbps); the spiral guard uses it instead of a multiple of `tb`.
 */
#define SAMMY_CMCD_DECLARED_FLOOR_KEY "sammy-floor"

/* The four CMCD header fields, in the order the Node decoder merges them (a later one's keys win). */
#define SAMMY_CMCD_HEADER_COUNT 4
extern const char *const SAMMY_CMCD_HEADER_FIELDS[SAMMY_CMCD_HEADER_COUNT];

typedef enum { SAMMY_CMCD_NONE = 0, SAMMY_CMCD_HEADER, SAMMY_CMCD_QUERY } sammy_cmcd_source;

typedef struct {
  /* Requested rate in kbps as sent (before clamping); 0 when none or unusable. */
  int64_t rtp_kbps;
  /*
   * What the request says about its stream, for the spiral guard (kbps, as the
   * decoder reads them: a fraction is kept; a v2 inner list counts by its largest
   * item); 0 when absent or unusable. `tb`: the highest bitrate the player may play
   * now; `br`: the encoded bitrate of the requested object.
   */
  double top_bitrate_kbps;
  double bitrate_kbps;
  /* `sammy-floor`: the least rate the player declares its bitrate rule needs; 0 when absent or unusable. */
  double declared_floor_kbps;
  /* Where the payload came from; NONE when the request carried no CMCD. */
  sammy_cmcd_source source;
  /* Why CMCD was ignored, or notes about it (a repeated rtp, an unusable tb), "; "-separated; empty when clean. */
  char problem[256];
} sammy_rate_request;

typedef struct {
  /* Each CMCD header field's value (repeated fields joined with ", "), or NULL when absent; latin1 bytes. */
  const char *header[SAMMY_CMCD_HEADER_COUNT];
  size_t header_length[SAMMY_CMCD_HEADER_COUNT];
  /* The query string without '?', or NULL. */
  const char *query;
  size_t query_length;
  /* Read the `CMCD` query argument when no CMCD header is present. */
  bool honour_query;
  size_t max_bytes;
} sammy_cmcd_input;

/* Never fails: hostile input becomes rtp_kbps 0 with a problem. */
sammy_rate_request sammy_read_rate_request(const sammy_cmcd_input *in);

/*
 * Removes every `CMCD` argument from a query string (same name decoding as the
 * reader), writing the rest to `out` (capacity >= length + 1). Returns the new length.
 */
size_t sammy_strip_cmcd_query(const char *query, size_t length, char *out);

#endif
