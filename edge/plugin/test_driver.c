/*
 * Runs the plugin's pure parts on inputs from stdin, one case a line, for the
 * edge's jest tests (edge/test/plugin-core.test.ts), which run the Node server's
 * own functions on the same inputs and compare. Fields are hex so any byte fits.
 *
 *   test_driver cmcd       H0 H1 H2 H3 QUERY HONOUR  -> rtp_kbps <TAB> source <TAB> problem
 *   test_driver strip      QUERY                     -> stripped query (hex)
 *   test_driver options    ARG <TAB> ARG ...         -> ok min max query max_bytes | error message
 *   test_driver telemetry  PATH PROBLEM              -> the JSON line
 * where H0..H3 are the CMCD-Object, -Request, -Session and -Status values, '-' for absent.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmcd.h"
#include "options.h"
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

static void run_cmcd(char **f, size_t n) {
  if (n != 6) {
    printf("bad case\n");
    return;
  }
  static char bufs[5][1 << 17];
  sammy_cmcd_input in = {.honour_query = f[5][0] == '1', .max_bytes = SAMMY_CMCD_DEFAULT_MAX_BYTES};
  for (size_t i = 0; i < 4; i++) {
    in.header[i] = strcmp(f[i], "-") == 0 ? NULL : bufs[i];
    in.header_length[i] = in.header[i] == NULL ? 0 : unhex(f[i], bufs[i]);
  }
  in.query = strcmp(f[4], "-") == 0 ? NULL : bufs[4];
  in.query_length = in.query == NULL ? 0 : unhex(f[4], bufs[4]);
  sammy_rate_request r = sammy_read_rate_request(&in);
  const char *source = r.source == SAMMY_CMCD_HEADER ? "header" : r.source == SAMMY_CMCD_QUERY ? "query" : "none";
  printf("%lld\t%s\t", (long long)r.rtp_kbps, source);
  print_hex(r.problem, strlen(r.problem));
  printf("\n");
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: test_driver cmcd|strip|options|telemetry < cases\n");
    return 2;
  }
  const char *mode = argv[1];
  static char line[1 << 19];
  static char buf[1 << 18];
  static char out[1 << 18];
  while (fgets(line, sizeof line, stdin) != NULL) {
    line[strcspn(line, "\n")] = '\0';
    char *f[64];
    size_t n = split(line, f, 64);
    if (strcmp(mode, "cmcd") == 0) {
      run_cmcd(f, n);
    } else if (strcmp(mode, "strip") == 0) {
      size_t len = n == 0 ? 0 : unhex(f[0], buf);
      size_t stripped = sammy_strip_cmcd_query(buf, len, out);
      print_hex(out, stripped);
      printf("\n");
    } else if (strcmp(mode, "options") == 0) {
      sammy_edge_options o;
      char error[256];
      if (sammy_parse_options((int)n, (const char *const *)f, &o, error, sizeof error)) {
        printf("ok %lld %lld %s %lld\n", (long long)o.min_rate_kbps, (long long)o.max_rate_kbps,
               o.honour_query ? "on" : "off", (long long)o.max_cmcd_bytes);
      } else {
        printf("error %s\n", error);
      }
    } else if (strcmp(mode, "telemetry") == 0) {
      size_t path_length = unhex(n > 0 ? f[0] : "", buf);
      unhex(n > 1 ? f[1] : "", out);
      sammy_tcp_info start = {.total_retrans = 1, .bytes_sent = 100, .bytes_retrans = 0};
      sammy_tcp_info end = {.rtt_us = 5100, .min_rtt_us = 5000, .total_retrans = 3, .snd_cwnd_packets = 10,
                            .delivery_rate_bytes_per_s = 5000000, .bytes_sent = 10000100, .bytes_retrans = 2896,
                            .max_pacing_rate_bytes_per_s = 5000000};
      sammy_response_record r = {.time_ms = 1795418008347, .path = buf, .path_length = path_length, .status = 200,
                                 .bytes = 10000000, .duration_ms = 2000.25, .rtp_kbps = 40000,
                                 .applied_rate_kbps = 40000, .pacing = "paced", .start = &start, .end = &end,
                                 .remote_address = "127.0.0.1", .remote_port = 40000, .aborted = false,
                                 .cmcd_problem = out, .cache_lookup = "hit-fresh"};
      static char json[4096];
      sammy_format_telemetry(&r, json, sizeof json);
      printf("%s\n", json);
    } else {
      fprintf(stderr, "unknown mode %s\n", mode);
      return 2;
    }
  }
  return 0;
}
