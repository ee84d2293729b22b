#include "options.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmcd.h"

const sammy_edge_options SAMMY_EDGE_DEFAULT_OPTIONS = {
  /* 100 kbps is CTA-5004's rtp granularity; below it a client could hold a connection for minutes per segment. */
  .min_rate_kbps  = 100,
  .max_rate_kbps  = 10000000,
  .honour_query   = true,
  .max_cmcd_bytes = SAMMY_CMCD_DEFAULT_MAX_BYTES,
};

static bool invalid(char *error, size_t error_size, const char *name, const char *value, const char *accepted) {
  snprintf(error, error_size, "SAMMY_EDGE_INVALID_OPTION: invalid --%s: \"%s\" (accepted: %s)", name, value, accepted);
  return false;
}

static bool integer_in(const char *text, int64_t min, int64_t max, int64_t *out) {
  if (text[0] == '\0' || text[0] == '-' || text[0] == '+' || text[0] == ' ') return false;
  errno = 0;
  char *end = NULL;
  long long value = strtoll(text, &end, 10);
  if (errno != 0 || *end != '\0' || value < min || value > max) return false;
  *out = value;
  return true;
}

bool sammy_parse_options(int argc, const char *const *argv, sammy_edge_options *out, char *error, size_t error_size) {
  *out = SAMMY_EDGE_DEFAULT_OPTIONS;
  char range[96];
  for (int i = 0; i < argc; i++) {
    const char *arg = argv[i];
    const char *eq = strchr(arg, '=');
    if (strncmp(arg, "--", 2) != 0 || eq == NULL) {
      snprintf(error, error_size,
               "SAMMY_EDGE_BAD_ARGS: \"%s\" is not --name=value (options: --min-rate-kbps, --max-rate-kbps, --query-cmcd, "
               "--max-cmcd-bytes)",
               arg);
      return false;
    }
    char name[32];
    size_t name_length = (size_t)(eq - arg - 2);
    if (name_length >= sizeof name) name_length = sizeof name - 1;
    memcpy(name, arg + 2, name_length);
    name[name_length] = '\0';
    const char *value = eq + 1;
    if (strcmp(name, "min-rate-kbps") == 0 || strcmp(name, "max-rate-kbps") == 0) {
      snprintf(range, sizeof range, "an integer from 1 to %lld", SAMMY_MAX_RATE_KBPS);
      int64_t *target = name[1] == 'i' ? &out->min_rate_kbps : &out->max_rate_kbps;
      if (!integer_in(value, 1, SAMMY_MAX_RATE_KBPS, target)) return invalid(error, error_size, name, value, range);
    } else if (strcmp(name, "query-cmcd") == 0) {
      if (strcmp(value, "on") != 0 && strcmp(value, "off") != 0) return invalid(error, error_size, name, value, "on, off");
      out->honour_query = strcmp(value, "on") == 0;
    } else if (strcmp(name, "max-cmcd-bytes") == 0) {
      if (!integer_in(value, 64, 64 * 1024, &out->max_cmcd_bytes)) {
        return invalid(error, error_size, name, value, "an integer from 64 to 65536");
      }
    } else {
      snprintf(error, error_size,
               "SAMMY_EDGE_BAD_ARGS: unknown option --%s (options: --min-rate-kbps, --max-rate-kbps, --query-cmcd, "
               "--max-cmcd-bytes)",
               name);
      return false;
    }
  }
  if (out->max_rate_kbps < out->min_rate_kbps) {
    char value[24];
    snprintf(value, sizeof value, "%lld", (long long)out->max_rate_kbps);
    snprintf(range, sizeof range, "at least --min-rate-kbps (%lld)", (long long)out->min_rate_kbps);
    return invalid(error, error_size, "max-rate-kbps", value, range);
  }
  return true;
}
