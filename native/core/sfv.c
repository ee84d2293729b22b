/*
 * A structured-field dictionary reader that accepts and refuses what the Node
 * server's decoder does (@svta/cml-structured-field-values 'parseDict' and the
 * functions it calls, with decodeCmcd's reduction of items), step for step, so that
 * one CMCD payload means the same rate at the edge and at the server. Where that
 * decoder is looser than RFC 8941 (non-ASCII in strings, Unicode white space in
 * trims, a decimal of value 2.0 counting as an integer) this file is too; the
 * edge's tests run both readers over the same inputs.
 */
#include "sfv.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
  const char *s;
  size_t n;
  sammy_text_encoding encoding;
} cursor;

/* JavaScript's String.prototype.trim set: ASCII TAB..CR and space, and the Unicode space separators. */
size_t sammy_space_at(const char *s, size_t n, sammy_text_encoding encoding) {
  if (n == 0) return 0;
  const unsigned char *u = (const unsigned char *)s;
  if (u[0] == ' ' || (u[0] >= 0x09 && u[0] <= 0x0d)) return 1;
  if (encoding == SAMMY_TEXT_LATIN1) return u[0] == 0xa0 ? 1 : 0;
  if (n >= 2 && u[0] == 0xc2 && u[1] == 0xa0) return 2; /* U+00A0 */
  if (n < 3) return 0;
  if (u[0] == 0xe1 && u[1] == 0x9a && u[2] == 0x80) return 3; /* U+1680 */
  /* U+2000..200A, U+2028, U+2029, U+202F */
  if (u[0] == 0xe2 && u[1] == 0x80 && ((u[2] >= 0x80 && u[2] <= 0x8a) || u[2] == 0xa8 || u[2] == 0xa9 || u[2] == 0xaf)) return 3;
  if (u[0] == 0xe2 && u[1] == 0x81 && u[2] == 0x9f) return 3; /* U+205F */
  if (u[0] == 0xe3 && u[1] == 0x80 && u[2] == 0x80) return 3; /* U+3000 */
  if (u[0] == 0xef && u[1] == 0xbb && u[2] == 0xbf) return 3; /* U+FEFF */
  return 0;
}

/* The length of a trimmed white-space character ending at s[n-1], or 0 (the text is valid UTF-8 or latin1). */
static size_t space_before(const char *s, size_t n, sammy_text_encoding encoding) {
  for (size_t len = 1; len <= 3 && len <= n; len++) {
    if (sammy_space_at(s + n - len, len, encoding) == len) return len;
    if (encoding == SAMMY_TEXT_LATIN1) break;
  }
  return 0;
}

void sammy_trim(const char **s, size_t *n, sammy_text_encoding encoding) {
  size_t len;
  while ((len = sammy_space_at(*s, *n, encoding)) > 0) {
    *s += len;
    *n -= len;
  }
  while ((len = space_before(*s, *n, encoding)) > 0) *n -= len;
}

/* The decoder trims both ends, but the end of what remains is the already trimmed end of the input. */
static void trim_start(cursor *c) {
  size_t len;
  while ((len = sammy_space_at(c->s, c->n, c->encoding)) > 0) {
    c->s += len;
    c->n -= len;
  }
}

static void advance(cursor *c, size_t k) {
  c->s += k;
  c->n -= k;
}

static bool first_is(const cursor *c, char ch) { return c->n > 0 && c->s[0] == ch; }
static bool is_digit(char ch) { return ch >= '0' && ch <= '9'; }
static bool is_lower(char ch) { return ch >= 'a' && ch <= 'z'; }
static bool is_alpha(char ch) { return is_lower(ch) || (ch >= 'A' && ch <= 'Z'); }

static bool is_key_char(char ch) {
  return is_lower(ch) || is_digit(ch) || ch == '_' || ch == '-' || ch == '.' || ch == '*';
}

/* RFC 8941 tchar plus ':' and '/' (the decoder's token pattern). */
static bool is_token_char(char ch) {
  return is_alpha(ch) || is_digit(ch) || (ch != '\0' && strchr("!#$%&'*+-.^_`|~:/", ch) != NULL);
}

static bool is_base64_char(char ch) { return is_alpha(ch) || is_digit(ch) || ch == '+' || ch == '/'; }

/* WHATWG forgiving-base64 decode (atob), which the decoder applies to a byte sequence: only whether it succeeds matters. */
static bool forgiving_base64_ok(const char *s, size_t n) {
  size_t kept = 0;
  size_t equals_at_end = 0;
  for (size_t i = 0; i < n; i++) {
    char ch = s[i];
    if (ch == '\t' || ch == '\n' || ch == '\f' || ch == '\r' || ch == ' ') continue;
    kept++;
    if (ch == '=') {
      equals_at_end++;
    } else {
      if (equals_at_end > 0 || !is_base64_char(ch)) return false;
    }
  }
  if (equals_at_end > 0) {
    if (kept % 4 != 0 || equals_at_end > 2) return false;
    kept -= equals_at_end;
  }
  return kept % 4 != 1;
}

static bool parse_key(cursor *c, const char **key, size_t *key_len) {
  if (c->n == 0 || !(is_lower(c->s[0]) || c->s[0] == '*')) return false;
  size_t i = 0;
  while (i < c->n && is_key_char(c->s[i])) i++;
  *key = c->s;
  *key_len = i;
  advance(c, i);
  return true;
}

/* Integer or Decimal; sets out->kind NUMBER with its integer part, sign and integrality. */
static bool parse_number(cursor *c, sammy_sf_value *out) {
  const char *start = c->s;
  bool negative = false;
  if (first_is(c, '-')) {
    negative = true;
    advance(c, 1);
  }
  if (c->n == 0) return false;
  size_t digits = 0;
  while (digits < c->n && is_digit(c->s[digits])) digits++;
  if (digits == 0) return false;
  int64_t integer = 0;
  if (digits <= 15) {
    for (size_t i = 0; i < digits; i++) integer = integer * 10 + (c->s[i] - '0');
  }
  advance(c, digits);
  bool whole = true;
  if (first_is(c, '.')) {
    if (digits > 12) return false;
    size_t fraction = 0;
    while (1 + fraction < c->n && is_digit(c->s[1 + fraction])) fraction++;
    /* The decoder allows 1 to 3 fraction digits. */
    if (fraction == 0 || fraction > 3) return false;
    for (size_t i = 0; i < fraction; i++) {
      if (c->s[1 + i] != '0') whole = false;
    }
    advance(c, 1 + fraction);
  } else if (digits > 15) {
    return false;
  }
  out->kind = SAMMY_SF_NUMBER;
  out->integer_part = negative ? -integer : integer;
  out->negative = negative;
  out->is_integer = whole;
  /* At most 15 digits and a sign: strtod reads them as the decoder's parseFloat does (correctly rounded). */
  char digits_text[24];
  size_t length = (size_t)(c->s - start);
  memcpy(digits_text, start, length);
  digits_text[length] = '\0';
  out->number = strtod(digits_text, NULL);
  out->smallest = out->number;
  return true;
}

static bool parse_string(cursor *c) {
  advance(c, 1); /* the opening quote */
  while (c->n > 0) {
    unsigned char ch = (unsigned char)c->s[0];
    if (ch == '\\') {
      if (c->n < 2 || (c->s[1] != '"' && c->s[1] != '\\')) return false;
      advance(c, 2);
      continue;
    }
    if (ch == '"') {
      advance(c, 1);
      return true;
    }
    if (ch < 0x20 || ch == 0x7f) return false;
    advance(c, 1);
  }
  return false;
}

static bool parse_bare_item(cursor *c, sammy_sf_value *out) {
  out->kind = SAMMY_SF_OTHER;
  if (c->n == 0) return false;
  char first = c->s[0];
  if (first == '"') return parse_string(c);
  if (first == '-' || is_digit(first)) return parse_number(c, out);
  if (first == '?') {
    if (c->n < 2 || (c->s[1] != '0' && c->s[1] != '1')) return false;
    advance(c, 2);
    return true;
  }
  if (first == ':') {
    const char *end = memchr(c->s + 1, ':', c->n - 1);
    if (end == NULL) return false;
    /* The decoder finds the closing ':' with a pattern whose '.' stops at a line break. */
    for (const char *p = c->s + 1; p < end; p++) {
      if (*p == '\n' || *p == '\r') return false;
    }
    if (!forgiving_base64_ok(c->s + 1, (size_t)(end - c->s - 1))) return false;
    advance(c, (size_t)(end - c->s) + 1);
    return true;
  }
  if (is_alpha(first) || first == '*') {
    size_t i = 1;
    while (i < c->n && is_token_char(c->s[i])) i++;
    advance(c, i);
    return true;
  }
  if (first == '@') {
    advance(c, 1);
    sammy_sf_value date;
    if (!parse_number(c, &date) || !date.is_integer) return false;
    out->kind = SAMMY_SF_OTHER;
    return true;
  }
  return false;
}

/* Parameters (";key[=value]"...); *present says whether there were any. */
static bool parse_parameters(cursor *c, bool *present) {
  *present = false;
  while (first_is(c, ';')) {
    advance(c, 1);
    trim_start(c);
    const char *key;
    size_t key_len;
    if (!parse_key(c, &key, &key_len)) return false;
    if (first_is(c, '=')) {
      advance(c, 1);
      sammy_sf_value ignored;
      if (!parse_bare_item(c, &ignored)) return false;
    }
    *present = true;
  }
  return true;
}

static bool parse_item(cursor *c, sammy_sf_value *out) {
  if (!parse_bare_item(c, out)) return false;
  bool params;
  if (!parse_parameters(c, &params)) return false;
  /* decodeCmcd keeps an item with parameters as an object holding its value. */
  if (params && out->kind == SAMMY_SF_NUMBER) out->kind = SAMMY_SF_NUMBER_WITH_PARAMS;
  return true;
}

/* An inner list; `out` says whether it is a list of numbers, and their largest and smallest. */
static bool parse_inner_list(cursor *c, sammy_sf_value *out) {
  advance(c, 1); /* '(' */
  size_t items = 0;
  bool all_numbers = true;
  while (c->n > 0) {
    trim_start(c);
    if (first_is(c, ')')) {
      advance(c, 1);
      bool params;
      if (!parse_parameters(c, &params)) return false;
      /* With parameters the decoder keeps the list inside an object: no longer an array. */
      out->kind = items > 0 && all_numbers && !params ? SAMMY_SF_NUMBER_LIST : SAMMY_SF_OTHER;
      return true;
    }
    sammy_sf_value item;
    if (!parse_item(c, &item)) return false;
    if (item.kind == SAMMY_SF_NUMBER || item.kind == SAMMY_SF_NUMBER_WITH_PARAMS) {
      if (items == 0 || item.number > out->number) out->number = item.number;
      if (items == 0 || item.number < out->smallest) out->smallest = item.number;
    } else {
      all_numbers = false;
    }
    items++;
    if (!(first_is(c, ' ') || first_is(c, ')'))) return false;
  }
  return false;
}

static void keep_text(sammy_sf_value *v, const char *from, const char *to) {
  size_t len = (size_t)(to - from);
  if (len >= sizeof v->text) len = sizeof v->text - 1;
  memcpy(v->text, from, len);
  v->text[len] = '\0';
}

bool sammy_sf_dictionary(const char *text, size_t length, sammy_text_encoding encoding, const char *const *keys,
                         size_t n_keys, sammy_sf_value *values) {
  cursor c = {text, length, encoding};
  sammy_trim(&c.s, &c.n, encoding);
  while (c.n > 0) {
    const char *key;
    size_t key_len;
    if (!parse_key(&c, &key, &key_len)) return false;
    sammy_sf_value member = {.kind = SAMMY_SF_OTHER};
    const char *value_start = c.s;
    if (first_is(&c, '=')) {
      advance(&c, 1);
      value_start = c.s;
      if (first_is(&c, '(')) {
        if (!parse_inner_list(&c, &member)) return false;
      } else if (!parse_item(&c, &member)) {
        return false;
      }
    } else {
      bool params;
      /* A bare key is the boolean true (with or without parameters): never a number. */
      if (!parse_parameters(&c, &params)) return false;
      member.kind = SAMMY_SF_OTHER;
    }
    static const char bare_key_value[] = "true";
    if (value_start == c.s) {
      keep_text(&member, bare_key_value, bare_key_value + 4);
    } else {
      keep_text(&member, value_start, c.s);
    }
    for (size_t k = 0; k < n_keys; k++) {
      if (strlen(keys[k]) == key_len && memcmp(keys[k], key, key_len) == 0) values[k] = member;
    }
    trim_start(&c);
    if (c.n == 0) return true;
    if (c.s[0] != ',') return false;
    advance(&c, 1);
    trim_start(&c);
    if (c.n == 0 || c.s[0] == ',') return false;
  }
  return true;
}

size_t sammy_utf8_sanitize(const unsigned char *in, size_t n, char *out, size_t out_cap) {
  static const char replacement[] = "\xef\xbf\xbd";
  size_t o = 0;
  size_t i = 0;
  while (i < n) {
    unsigned char b = in[i];
    size_t need = 0;
    unsigned char lower = 0x80, upper = 0xbf;
    if (b < 0x80) {
      need = 0;
    } else if (b >= 0xc2 && b <= 0xdf) {
      need = 1;
    } else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      if (b == 0xe0) lower = 0xa0;
      if (b == 0xed) upper = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      if (b == 0xf0) lower = 0x90;
      if (b == 0xf4) upper = 0x8f;
    } else {
      if (o + 3 > out_cap) return (size_t)-1;
      memcpy(out + o, replacement, 3);
      o += 3;
      i++;
      continue;
    }
    /* The longest valid prefix of the sequence; an invalid byte ends it and is read again on its own. */
    size_t seen = 1;
    while (seen <= need) {
      if (i + seen >= n) break;
      unsigned char cb = in[i + seen];
      if (cb < lower || cb > upper) break;
      lower = 0x80;
      upper = 0xbf;
      seen++;
    }
    if (seen == need + 1) {
      if (o + seen > out_cap) return (size_t)-1;
      memcpy(out + o, in + i, seen);
      o += seen;
    } else {
      if (o + 3 > out_cap) return (size_t)-1;
      memcpy(out + o, replacement, 3);
      o += 3;
    }
    i += seen;
  }
  return o;
}
