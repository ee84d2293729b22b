#include "options.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmcd.h"

const sammy_options SAMMY_DEFAULT_OPTIONS = {
  .pacing                  = true,
  /* 100 kbps is CTA-5004's rtp granularity; below it a client could hold a connection for minutes per segment. */
  .min_rate_kbps           = 100,
  .max_rate_kbps           = 10000000,
  .spiral_guard            = true,
  /* server/src/spiral-guard.ts DEFAULT_SPIRAL_GUARD_MULTIPLIER: 1 / (0.5 x 0.8), Eq. 2.1 at an empty buffer. */
  .spiral_guard_multiplier = 2.5,
  .honour_query            = true,
  .max_cmcd_bytes          = SAMMY_CMCD_DEFAULT_MAX_BYTES,
  .tail_hold               = true,
};

typedef enum { KIND_ON_OFF, KIND_INTEGER, KIND_NUMBER } option_kind;

typedef struct {
  const char *name;
  unsigned flag;
  option_kind kind;
  double min, max;
  size_t offset;
} option_spec;

#define FIELD(f) offsetof(sammy_options, f)

static const option_spec OPTIONS[] = {
  {"pacing", SAMMY_OPT_PACING, KIND_ON_OFF, 0, 0, FIELD(pacing)},
  {"min-rate-kbps", SAMMY_OPT_MIN_RATE, KIND_INTEGER, 1, (double)SAMMY_MAX_RATE_KBPS, FIELD(min_rate_kbps)},
  {"max-rate-kbps", SAMMY_OPT_MAX_RATE, KIND_INTEGER, 1, (double)SAMMY_MAX_RATE_KBPS, FIELD(max_rate_kbps)},
  {"spiral-guard", SAMMY_OPT_SPIRAL_GUARD, KIND_ON_OFF, 0, 0, FIELD(spiral_guard)},
  {"spiral-guard-multiplier", SAMMY_OPT_SPIRAL_GUARD_MULTIPLIER, KIND_NUMBER, 1, 100, FIELD(spiral_guard_multiplier)},
  {"query-cmcd", SAMMY_OPT_QUERY_CMCD, KIND_ON_OFF, 0, 0, FIELD(honour_query)},
  {"max-cmcd-bytes", SAMMY_OPT_MAX_CMCD_BYTES, KIND_INTEGER, 64, 64 * 1024, FIELD(max_cmcd_bytes)},
  {"tail-hold", SAMMY_OPT_TAIL_HOLD, KIND_ON_OFF, 0, 0, FIELD(tail_hold)},
};
#define OPTION_COUNT (sizeof OPTIONS / sizeof OPTIONS[0])

static bool invalid(char *error, size_t error_size, const char *name, const char *value, size_t value_length,
                    const char *accepted) {
  snprintf(error, error_size, "SAMMY_INVALID_OPTION: invalid --%s: \"%.*s\" (accepted: %s)", name, (int)value_length,
           value, accepted);
  return false;
}

static void list_options(unsigned accepted, char *out, size_t cap) {
  size_t used = 0;
  out[0] = '\0';
  for (size_t i = 0; i < OPTION_COUNT; i++) {
    if (!(OPTIONS[i].flag & accepted)) continue;
    int n = snprintf(out + used, cap - used, "%s--%s", used == 0 ? "" : ", ", OPTIONS[i].name);
    if (n < 0 || (size_t)n >= cap - used) return;
    used += (size_t)n;
  }
}

/* A whole decimal integer in [min, max]: no sign, no space, nothing after it. */
static bool integer_in(const char *text, double min, double max, int64_t *out) {
  if (text[0] < '0' || text[0] > '9') return false;
  errno = 0;
  char *end = NULL;
  long long value = strtoll(text, &end, 10);
  if (errno != 0 || *end != '\0' || (double)value < min || (double)value > max) return false;
  *out = value;
  return true;
}

/* A finite decimal number in [min, max] (as the server's Number(): digits, one '.', no exponent or sign). */
static bool number_in(const char *text, double min, double max, double *out) {
  size_t digits = 0, dots = 0;
  for (const char *p = text; *p != '\0'; p++) {
    if (*p >= '0' && *p <= '9') {
      digits++;
    } else if (*p == '.') {
      dots++;
    } else {
      return false;
    }
  }
  if (digits == 0 || dots > 1) return false;
  double value = strtod(text, NULL);
  if (!isfinite(value) || value < min || value > max) return false;
  *out = value;
  return true;
}

bool sammy_option_set(sammy_options *o, unsigned accepted, const char *name, size_t name_length, const char *value,
                      size_t value_length, unsigned *set, char *error, size_t error_size) {
  char key[40];
  if (name_length >= sizeof key) name_length = sizeof key - 1;
  for (size_t i = 0; i < name_length; i++) key[i] = name[i] == '_' ? '-' : name[i];
  key[name_length] = '\0';
  const option_spec *spec = NULL;
  for (size_t i = 0; i < OPTION_COUNT; i++) {
    if ((OPTIONS[i].flag & accepted) && strcmp(OPTIONS[i].name, key) == 0) spec = &OPTIONS[i];
  }
  if (spec == NULL) {
    char names[400];
    list_options(accepted, names, sizeof names);
    snprintf(error, error_size, "SAMMY_BAD_ARGS: unknown option --%s (options: %s)", key, names);
    return false;
  }
  char text[64];
  if (value_length >= sizeof text) value_length = sizeof text - 1;
  memcpy(text, value, value_length);
  text[value_length] = '\0';
  char range[96];
  char *field = (char *)o + spec->offset;
  switch (spec->kind) {
  case KIND_ON_OFF:
    if (strcmp(text, "on") != 0 && strcmp(text, "off") != 0) return invalid(error, error_size, key, value, value_length, "on, off");
    *(bool *)field = strcmp(text, "on") == 0;
    break;
  case KIND_INTEGER:
    snprintf(range, sizeof range, "an integer from %.0f to %.0f", spec->min, spec->max);
    if (!integer_in(text, spec->min, spec->max, (int64_t *)field)) return invalid(error, error_size, key, value, value_length, range);
    break;
  case KIND_NUMBER:
    snprintf(range, sizeof range, "a number from %g to %g", spec->min, spec->max);
    if (!number_in(text, spec->min, spec->max, (double *)field)) return invalid(error, error_size, key, value, value_length, range);
    break;
  }
  if (set != NULL) *set |= spec->flag;
  return true;
}

static size_t field_size(option_kind kind) {
  return kind == KIND_ON_OFF ? sizeof(bool) : kind == KIND_INTEGER ? sizeof(int64_t) : sizeof(double);
}

void sammy_options_merge(sammy_options *child, unsigned set, const sammy_options *parent) {
  for (size_t i = 0; i < OPTION_COUNT; i++) {
    if (set & OPTIONS[i].flag) continue;
    memcpy((char *)child + OPTIONS[i].offset, (const char *)parent + OPTIONS[i].offset, field_size(OPTIONS[i].kind));
  }
}

bool sammy_options_check(const sammy_options *o, char *error, size_t error_size) {
  if (o->max_rate_kbps >= o->min_rate_kbps) return true;
  char value[24], range[64];
  snprintf(value, sizeof value, "%lld", (long long)o->max_rate_kbps);
  snprintf(range, sizeof range, "at least --min-rate-kbps (%lld)", (long long)o->min_rate_kbps);
  return invalid(error, error_size, "max-rate-kbps", value, strlen(value), range);
}

bool sammy_parse_options(int argc, const char *const *argv, unsigned accepted, sammy_options *out, char *error,
                         size_t error_size) {
  *out = SAMMY_DEFAULT_OPTIONS;
  for (int i = 0; i < argc; i++) {
    const char *arg = argv[i];
    const char *eq = strchr(arg, '=');
    if (strncmp(arg, "--", 2) != 0 || eq == NULL) {
      char names[400];
      list_options(accepted, names, sizeof names);
      snprintf(error, error_size, "SAMMY_BAD_ARGS: \"%s\" is not --name=value (options: %s)", arg, names);
      return false;
    }
    if (!sammy_option_set(out, accepted, arg + 2, (size_t)(eq - arg - 2), eq + 1, strlen(eq + 1), NULL, error, error_size)) {
      return false;
    }
  }
  return sammy_options_check(out, error, error_size);
}
