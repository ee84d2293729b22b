/*
 * Which CMCD payload counts and which rtp values an edge may trust: the rules of
 * server/src/cmcd.ts (rateFrom, readRateRequest), in the same order, so the edge
 * and the Node server pace the same request at the same rate.
 */
#define _GNU_SOURCE /* memmem */
#include "cmcd.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sfv.h"

const char *const SAMMY_CMCD_HEADER_FIELDS[SAMMY_CMCD_HEADER_COUNT] = {"CMCD-Object", "CMCD-Request", "CMCD-Session",
                                                                       "CMCD-Status"};

#define CMCD_PARAM "CMCD"

typedef struct {
  const char *text;
  size_t length;
} payload;

enum { KEY_VERSION, KEY_RTP, KEY_TOP_BITRATE, KEY_BITRATE, KEY_DECLARED_FLOOR, KEY_COUNT };
static const char *const KEYS[KEY_COUNT] = {"v", "rtp", "tb", "br", SAMMY_CMCD_DECLARED_FLOOR_KEY};

static const char *source_name(sammy_cmcd_source source) { return source == SAMMY_CMCD_QUERY ? "query" : "header"; }

/* Node's Buffer.byteLength of the decoded text: a latin1 character above 0x7f takes two bytes in UTF-8. */
static size_t utf8_length(const payload *p, sammy_text_encoding encoding) {
  if (encoding == SAMMY_TEXT_UTF8) return p->length;
  size_t bytes = p->length;
  for (size_t i = 0; i < p->length; i++) {
    if ((unsigned char)p->text[i] >= 0x80) bytes++;
  }
  return bytes;
}

/* How many members are named rtp, counted as the server counts them (split on ',', name before '=' or ';'). */
static size_t rtp_members(const payload *p, sammy_text_encoding encoding) {
  size_t count = 0;
  const char *s = p->text;
  const char *end = p->text + p->length;
  while (s <= end) {
    const char *comma = memchr(s, ',', (size_t)(end - s));
    const char *member_end = comma == NULL ? end : comma;
    const char *m = s;
    size_t n = (size_t)(member_end - s);
    sammy_trim(&m, &n, encoding);
    size_t name_length = 0;
    while (name_length < n && m[name_length] != '=' && m[name_length] != ';') name_length++;
    sammy_trim(&m, &name_length, encoding);
    if (name_length == 3 && memcmp(m, "rtp", 3) == 0) count++;
    if (comma == NULL) break;
    s = comma + 1;
  }
  return count;
}

/* Appends one note to the request's problem, "; "-separated as the server joins them. */
static void note(sammy_rate_request *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(sammy_rate_request *r, const char *fmt, ...) {
  size_t used = strlen(r->problem);
  if (used > 0 && used + 2 < sizeof r->problem) {
    memcpy(r->problem + used, "; ", 3);
    used += 2;
  }
  if (used + 1 >= sizeof r->problem) return;
  va_list args;
  va_start(args, fmt);
  vsnprintf(r->problem + used, sizeof r->problem - used, fmt, args);
  va_end(args);
}

/*
 * A `tb`, `br` or `sammy-floor` value in kbps (server/src/cmcd.ts bitrateKbps): a positive number
 * (with or without parameters), or a non-empty inner list of positive numbers (its
 * largest); 0 with a note when present but anything else.
 */
static double bitrate_kbps(sammy_rate_request *r, const char *key, const sammy_sf_value *v) {
  if (v->kind == SAMMY_SF_ABSENT) return 0;
  bool number = v->kind == SAMMY_SF_NUMBER || v->kind == SAMMY_SF_NUMBER_WITH_PARAMS || v->kind == SAMMY_SF_NUMBER_LIST;
  if (number && v->smallest > 0 && v->number > 0) return v->number;
  note(r, "%s %s is not a positive bitrate (kbps): ignored", key, v->text);
  return 0;
}

static sammy_rate_request ignored(sammy_cmcd_source source, const char *fmt_problem, const char *detail) {
  sammy_rate_request r = {.rtp_kbps = 0, .source = source};
  snprintf(r.problem, sizeof r.problem, fmt_problem, source_name(source), detail);
  return r;
}

static sammy_rate_request rate_from(const payload *payloads, size_t n, sammy_cmcd_source source, size_t max_bytes) {
  sammy_text_encoding encoding = source == SAMMY_CMCD_QUERY ? SAMMY_TEXT_UTF8 : SAMMY_TEXT_LATIN1;
  sammy_rate_request r = {.rtp_kbps = 0, .source = source};
  size_t total_bytes = 0;
  for (size_t i = 0; i < n; i++) total_bytes += utf8_length(&payloads[i], encoding);
  if (total_bytes > max_bytes) {
    snprintf(r.problem, sizeof r.problem, "CMCD %s of %zu bytes exceeds %zu: ignored", source_name(source), total_bytes,
             max_bytes);
    return r;
  }
  sammy_sf_value values[KEY_COUNT];
  for (size_t k = 0; k < KEY_COUNT; k++) values[k] = (sammy_sf_value){.kind = SAMMY_SF_ABSENT};
  for (size_t i = 0; i < n; i++) {
    if (!sammy_sf_dictionary(payloads[i].text, payloads[i].length, encoding, KEYS, KEY_COUNT, values)) {
      return ignored(source, "CMCD %s is not a structured-field dictionary: ignored%s", "");
    }
  }
  const sammy_sf_value *v = &values[KEY_VERSION];
  if (v->kind != SAMMY_SF_ABSENT && !(v->kind == SAMMY_SF_NUMBER && v->is_integer && v->integer_part >= 1)) {
    snprintf(r.problem, sizeof r.problem, "CMCD version %s is not a version number: ignored", v->text);
    return r;
  }
  if (v->kind == SAMMY_SF_NUMBER && v->integer_part > SAMMY_CMCD_MAX_VERSION) {
    /* CTA-5004 section 6: a payload of a version the receiver does not understand is ignored. */
    snprintf(r.problem, sizeof r.problem, "CMCD version %lld is newer than %d: ignored", (long long)v->integer_part,
             SAMMY_CMCD_MAX_VERSION);
    return r;
  }
  /* The rate's own note comes first, then the stream's (as the server joins them). */
  sammy_rate_request stream = {.problem = ""};
  r.top_bitrate_kbps = bitrate_kbps(&stream, "tb", &values[KEY_TOP_BITRATE]);
  r.bitrate_kbps = bitrate_kbps(&stream, "br", &values[KEY_BITRATE]);
  r.declared_floor_kbps = bitrate_kbps(&stream, SAMMY_CMCD_DECLARED_FLOOR_KEY, &values[KEY_DECLARED_FLOOR]);
  const sammy_sf_value *rtp = &values[KEY_RTP];
  if (rtp->kind == SAMMY_SF_ABSENT) {
    /* nothing asked for */
  } else if (!(rtp->kind == SAMMY_SF_NUMBER && rtp->is_integer && rtp->integer_part > 0)) {
    note(&r, "rtp %s is not a positive integer (kbps): ignored", rtp->text);
  } else {
    r.rtp_kbps = rtp->integer_part;
    size_t count = 0;
    for (size_t i = 0; i < n; i++) count += rtp_members(&payloads[i], encoding);
    /* RFC 8941 section 4.2.2: the last of duplicated dictionary keys wins. */
    if (count > 1) note(&r, "rtp given %zu times: the last value (%lld) is used", count, (long long)r.rtp_kbps);
  }
  if (stream.problem[0] != '\0') note(&r, "%s", stream.problem);
  return r;
}

static int hex_value(char ch) {
  if (ch >= '0' && ch <= '9') return ch - '0';
  if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
  if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
  return -1;
}

/*
 * One name or value of application/x-www-form-urlencoded text as URLSearchParams
 * decodes it: '+' is a space, %XX a byte (a '%' without two hex digits stays), the
 * bytes UTF-8 with U+FFFD for what is invalid. `out` holds 3 x n + 1 bytes.
 */
static size_t form_decode(const char *s, size_t n, char *out) {
  unsigned char *bytes = malloc(n + 1);
  if (bytes == NULL) return 0;
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] == '+') {
      bytes[k++] = ' ';
    } else if (s[i] == '%' && i + 2 < n && hex_value(s[i + 1]) >= 0 && hex_value(s[i + 2]) >= 0) {
      bytes[k++] = (unsigned char)(hex_value(s[i + 1]) * 16 + hex_value(s[i + 2]));
      i += 2;
    } else {
      bytes[k++] = (unsigned char)s[i];
    }
  }
  size_t length = sammy_utf8_sanitize(bytes, k, out, 3 * n + 1);
  free(bytes);
  return length == (size_t)-1 ? 0 : length;
}

typedef void (*query_visitor)(const char *pair, size_t pair_length, bool is_cmcd, void *context);

/* Calls `visit` for every non-empty '&'-separated pair, saying whether its decoded name is CMCD. */
static void each_query_pair(const char *query, size_t length, query_visitor visit, void *context) {
  size_t i = 0;
  /* URLSearchParams drops one leading '?'. */
  if (length > 0 && query[0] == '?') i = 1;
  while (i <= length) {
    const char *amp = memchr(query + i, '&', length - i);
    size_t end = amp == NULL ? length : (size_t)(amp - query);
    if (end > i) {
      const char *pair = query + i;
      size_t pair_length = end - i;
      const char *eq = memchr(pair, '=', pair_length);
      size_t name_length = eq == NULL ? pair_length : (size_t)(eq - pair);
      bool is_cmcd = false;
      if (name_length <= 3 * sizeof CMCD_PARAM) {
        char name[3 * (3 * sizeof CMCD_PARAM) + 1];
        size_t decoded = form_decode(pair, name_length, name);
        is_cmcd = decoded == strlen(CMCD_PARAM) && memcmp(name, CMCD_PARAM, decoded) == 0;
      }
      visit(pair, pair_length, is_cmcd, context);
    }
    if (amp == NULL) break;
    i = end + 1;
  }
}

typedef struct {
  payload *items;
  size_t count;
  char *buffer;
  size_t used;
} query_payloads;

static void count_cmcd(const char *pair, size_t pair_length, bool is_cmcd, void *context) {
  (void)pair;
  (void)pair_length;
  if (is_cmcd) ++*(size_t *)context;
}

static void collect_cmcd(const char *pair, size_t pair_length, bool is_cmcd, void *context) {
  query_payloads *q = context;
  if (!is_cmcd) return;
  const char *eq = memchr(pair, '=', pair_length);
  const char *value = eq == NULL ? pair + pair_length : eq + 1;
  size_t value_length = (size_t)(pair + pair_length - value);
  char *out = q->buffer + q->used;
  size_t decoded = form_decode(value, value_length, out);
  q->items[q->count++] = (payload){out, decoded};
  q->used += decoded;
}

sammy_rate_request sammy_read_rate_request(const sammy_cmcd_input *in) {
  sammy_rate_request none = {.rtp_kbps = 0, .source = SAMMY_CMCD_NONE};
  payload headers[SAMMY_CMCD_HEADER_COUNT];
  size_t n_headers = 0;
  for (size_t i = 0; i < SAMMY_CMCD_HEADER_COUNT; i++) {
    if (in->header[i] != NULL && in->header_length[i] > 0) headers[n_headers++] = (payload){in->header[i], in->header_length[i]};
  }
  if (n_headers > 0) return rate_from(headers, n_headers, SAMMY_CMCD_HEADER, in->max_bytes);
  if (!in->honour_query || in->query == NULL || in->query_length == 0) return none;
  /* As the server: only a query that mentions CMCD literally is parsed at all. */
  if (memmem(in->query, in->query_length, CMCD_PARAM, strlen(CMCD_PARAM)) == NULL) return none;
  size_t arguments = 0;
  each_query_pair(in->query, in->query_length, count_cmcd, &arguments);
  if (arguments == 0) return none;
  query_payloads q = {.count = 0, .used = 0};
  q.items = malloc(arguments * sizeof *q.items);
  q.buffer = malloc(3 * in->query_length + 1);
  sammy_rate_request r;
  if (q.items == NULL || q.buffer == NULL) {
    r = ignored(SAMMY_CMCD_QUERY, "CMCD %s could not be read (out of memory): ignored%s", "");
  } else {
    each_query_pair(in->query, in->query_length, collect_cmcd, &q);
    r = rate_from(q.items, q.count, SAMMY_CMCD_QUERY, in->max_bytes);
  }
  free(q.items);
  free(q.buffer);
  return r;
}

typedef struct {
  char *out;
  size_t length;
} strip_context;

static void keep_other(const char *pair, size_t pair_length, bool is_cmcd, void *context) {
  strip_context *s = context;
  if (is_cmcd) return;
  if (s->length > 0) s->out[s->length++] = '&';
  memcpy(s->out + s->length, pair, pair_length);
  s->length += pair_length;
}

size_t sammy_strip_cmcd_query(const char *query, size_t length, char *out) {
  strip_context s = {out, 0};
  each_query_pair(query, length, keep_other, &s);
  out[s.length] = '\0';
  return s.length;
}
