/*
 * Runs the C core on inputs from stdin, one case a line, for the jest tests
 * (native/test/core.test.ts), which run the Node server's own functions on the
 * same inputs and compare. Fields are hex so any byte fits.
 *
 *   test_driver cmcd       H0 H1 H2 H3 QUERY HONOUR -> rtp_kbps <TAB> tb <TAB> br <TAB> sammy-floor <TAB> source <TAB> problem (hex)
 *   test_driver decide     H0 H1 H2 H3 QUERY ARG... -> outcome <TAB> applied <TAB> floor <TAB> basis <TAB> raised
 *   test_driver strip      QUERY                     -> stripped query (hex)
 *   test_driver options    ARG <TAB> ARG ...         -> ok pacing min max guard multiplier query max_bytes tail | error message
 *   test_driver telemetry  PATH PROBLEM              -> the JSON line
 *   test_driver drain      NOTSENT RATE DELIVERY     -> milliseconds
 *   test_driver constants  (no input)                -> NAME <TAB> VALUE, one a line: the drain policy's #defines
 *   test_driver train      RATE MIN_RTT_US MSS       -> bytes
 * where H0..H3 are the CMCD-Object, -Request, -Session and -Status values, '-' for
 * absent, and ARG are --name=value options (any of them).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmcd.h"
#include "options.h"
#include "rate.h"
#include "telemetry.h"

static size_t unhex(const char *hex, char *out) {
  size_t n = 0;
  for (size_t i = 0; hex[i] != '\0' && hex[i + 1] != '\0'; i += 2) {
    unsigned int byte;
    sscanf(hex + i, "%2x", &byte);
    out[n++] = (char)byte;
  }
  out[n] = '\0';
  return n;
}

static size_t split(char *line, char **fields, size_t max) {
  size_t n = 0;
  char *save = NULL;
  for (char *f = strtok_r(line, "\t", &save); f != NULL && n < max; f = strtok_r(NULL, "\t", &save)) fields[n++] = f;
  return n;
}

static void print_hex(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) printf("%02x", (unsigned char)s[i]);
}

static char bufs[5][1 << 17];

/* The CMCD input of a case's first five fields. */
static sammy_cmcd_input cmcd_input(char **f, bool honour_query, size_t max_bytes) {
  sammy_cmcd_input in = {.honour_query = honour_query, .max_bytes = max_bytes};
  for (size_t i = 0; i < 4; i++) {
    in.header[i] = strcmp(f[i], "-") == 0 ? NULL : bufs[i];
    in.header_length[i] = in.header[i] == NULL ? 0 : unhex(f[i], bufs[i]);
  }
  in.query = strcmp(f[4], "-") == 0 ? NULL : bufs[4];
  in.query_length = in.query == NULL ? 0 : unhex(f[4], bufs[4]);
  return in;
}

static void run_cmcd(char **f, size_t n) {
  if (n != 6) {
    printf("bad case\n");
    return;
  }
  sammy_cmcd_input in = cmcd_input(f, f[5][0] == '1', SAMMY_CMCD_DEFAULT_MAX_BYTES);
  sammy_rate_request r = sammy_read_rate_request(&in);
  const char *source = r.source == SAMMY_CMCD_HEADER ? "header" : r.source == SAMMY_CMCD_QUERY ? "query" : "none";
  printf("%lld\t%.17g\t%.17g\t%.17g\t%s\t", (long long)r.rtp_kbps, r.top_bitrate_kbps, r.bitrate_kbps,
         r.declared_floor_kbps, source);
  print_hex(r.problem, strlen(r.problem));
  printf("\n");
}

static void run_decide(char **f, size_t n) {
  if (n < 5) {
    printf("bad case\n");
    return;
  }
  sammy_options o;
  char error[512];
  if (!sammy_parse_options((int)(n - 5), (const char *const *)f + 5, SAMMY_OPT_ALL, &o, error, sizeof error)) {
    printf("error %s\n", error);
    return;
  }
  sammy_cmcd_input in = cmcd_input(f, o.honour_query, (size_t)o.max_cmcd_bytes);
  sammy_rate_request r = sammy_read_rate_request(&in);
  sammy_rate_decision d = sammy_decide_rate(&r, &o, (sammy_response_facts){.has_body = true, .own_socket = true});
  printf("%s\t%lld\t%lld\t%s\t%s\n", sammy_pacing_name(d.outcome), (long long)d.applied_rate_kbps,
         (long long)d.guard_floor_kbps, d.guard_basis == NULL ? "-" : d.guard_basis,
         d.guard == SAMMY_GUARD_RAISED ? "raised" : "-");
}

static void run_options(char **f, size_t n) {
  sammy_options o;
  char error[512];
  if (sammy_parse_options((int)n, (const char *const *)f, SAMMY_OPT_ALL, &o, error, sizeof error)) {
    printf("ok %s %lld %lld %s %g %s %lld %s\n", o.pacing ? "on" : "off", (long long)o.min_rate_kbps,
           (long long)o.max_rate_kbps, o.spiral_guard ? "on" : "off", o.spiral_guard_multiplier,
           o.honour_query ? "on" : "off", (long long)o.max_cmcd_bytes, o.tail_hold ? "on" : "off");
  } else {
    printf("error %s\n", error);
  }
}

static void run_telemetry(char **f, size_t n) {
  static char path[1 << 16], problem[1 << 16];
  size_t path_length = unhex(n > 0 ? f[0] : "", path);
  unhex(n > 1 ? f[1] : "", problem);
  sammy_tcp_info start = {.total_retrans = 1, .bytes_sent = 100, .bytes_retrans = 0};
  sammy_tcp_info end = {.rtt_us = 5100, .min_rtt_us = 5000, .total_retrans = 3, .snd_cwnd_packets = 10,
                        .delivery_rate_bytes_per_s = 5000000, .bytes_sent = 10000100, .bytes_retrans = 2896,
                        .max_pacing_rate_bytes_per_s = 5000000};
  sammy_rate_decision rate = {.outcome = SAMMY_PACING_PACED, .rtp_kbps = 40000, .applied_rate_kbps = 40000,
                              .rate_bytes_per_s = 5000000, .guard = SAMMY_GUARD_KEPT, .guard_floor_kbps = 2625,
                              .guard_basis = "tb"};
  sammy_response_record r = {.time_ms = 1795418008347, .path = path, .path_length = path_length, .status = 200,
                             .bytes = 10000000, .body_path = "sendfile", .duration_ms = 2000.25, .rate = &rate,
.start = &start, .end = &end,
                             .remote_address = "127.0.0.1", .remote_port = 40000, .aborted = false,
                             .cmcd_problem = problem, .cache_lookup = "hit-fresh", .protocol = "http/1.1",
                             .server = "test"};
  static char json[4096];
  sammy_format_telemetry(&r, json, sizeof json);
  printf("%s\n", json);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: test_driver cmcd|decide|strip|options|telemetry|drain|train|constants < cases\n");
    return 2;
  }
  const char *mode = argv[1];
  if (strcmp(mode, "constants") == 0) {
    /* The values the core is compiled with, for the test that holds them to server/src/drain.ts. */
    printf("DRAIN_POLL_MIN_MS\t%llu\n", (unsigned long long)SAMMY_DRAIN_POLL_MIN_MS);
    printf("DRAIN_POLL_MAX_MS\t%llu\n", (unsigned long long)SAMMY_DRAIN_POLL_MAX_MS);
    printf("PACED_DRAIN_POLL_MAX_MS\t%llu\n", (unsigned long long)SAMMY_PACED_DRAIN_POLL_MAX_MS);
    printf("UNPACED_DRAIN_RATE_BYTES_PER_S\t%llu\n", (unsigned long long)SAMMY_UNPACED_DRAIN_RATE_BYTES_PER_S);
    printf("MAX_DRAIN_STALL_MS\t%llu\n", (unsigned long long)SAMMY_MAX_DRAIN_STALL_MS);
    return 0;
  }
  static char line[1 << 19];
  static char buf[1 << 18];
  static char out[1 << 18];
  while (fgets(line, sizeof line, stdin) != NULL) {
    line[strcspn(line, "\n")] = '\0';
    char *f[64];
    size_t n = split(line, f, 64);
    if (strcmp(mode, "cmcd") == 0) {
      run_cmcd(f, n);
    } else if (strcmp(mode, "decide") == 0) {
      run_decide(f, n);
    } else if (strcmp(mode, "strip") == 0) {
      size_t len = n == 0 ? 0 : unhex(f[0], buf);
      size_t stripped = sammy_strip_cmcd_query(buf, len, out);
      print_hex(out, stripped);
      printf("\n");
    } else if (strcmp(mode, "options") == 0) {
      run_options(f, n);
    } else if (strcmp(mode, "telemetry") == 0) {
      run_telemetry(f, n);
    } else if (strcmp(mode, "train") == 0) {
      if (n != 3) {
        printf("bad case\n");
        continue;
      }
      printf("%llu\n", (unsigned long long)sammy_kernel_train_bytes(strtoull(f[0], NULL, 10), (uint32_t)strtoul(f[1], NULL, 10),
                                                                    (uint32_t)strtoul(f[2], NULL, 10)));
    } else if (strcmp(mode, "drain") == 0) {
      if (n != 3) {
        printf("bad case\n");
        continue;
      }
      printf("%llu\n", (unsigned long long)sammy_drain_poll_ms(strtoull(f[0], NULL, 10), strtoull(f[1], NULL, 10),
                                                               strtoull(f[2], NULL, 10)));
    } else {
      fprintf(stderr, "unknown mode %s\n", mode);
      return 2;
    }
  }
  return 0;
}
