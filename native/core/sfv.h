/*
 * Structured-field dictionaries (RFC 8941) as the CMCD decoder of the Node server
 * reads them (@svta/cml-structured-field-values, used by @svta/cml-cmcd's
 * decodeCmcd), so the edge accepts and refuses exactly the payloads the server
 * does. Only what the pace rate needs is kept: the last value of a few keys.
 */
#ifndef SAMMY_SFV_H
#define SAMMY_SFV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * How the payload's bytes map to the decoder's characters: a header value is one
 * character per byte (Node reads header values as latin1), a query value is UTF-8
 * (already made valid, see sammy_utf8_sanitize). It matters only for which
 * characters count as white space when the decoder trims.
 */
typedef enum { SAMMY_TEXT_LATIN1, SAMMY_TEXT_UTF8 } sammy_text_encoding;

/*
 * What a dictionary member's value reduces to. decodeCmcd makes an item without
 * parameters its bare value, keeps an item with parameters as an object holding
 * the value, and an inner list without parameters as an array of its items: the
 * reader of `rtp` takes only a bare number, the readers of `tb` and `br` also a
 * number with parameters and a list of numbers (server/src/cmcd.ts).
 */
typedef enum {
  SAMMY_SF_ABSENT = 0,
  /* An Integer or a Decimal without parameters. */
  SAMMY_SF_NUMBER,
  /* An Integer or a Decimal with parameters. */
  SAMMY_SF_NUMBER_WITH_PARAMS,
  /* An inner list without parameters, of at least one item, every item a number (with or without parameters). */
  SAMMY_SF_NUMBER_LIST,
  /* Anything else: a string, token, boolean, byte sequence, date, another inner list. */
  SAMMY_SF_OTHER,
} sammy_sf_kind;

typedef struct {
  sammy_sf_kind kind;
  /* For a number: its integer part with sign, and whether it has no fraction (2.0 is an integer, 2.5 is not). */
  int64_t integer_part;
  bool is_integer;
  bool negative;
  /* A number's value as the decoder reads it (a double); for a number list, its largest and smallest items. */
  double number;
  double smallest;
  /* The member's text as written (for log lines), truncated. */
  char text[48];
} sammy_sf_value;

/*
 * Decodes one dictionary and stores the last value of each of `keys` (n_keys
 * names) into `values` (left unchanged for keys the dictionary lacks). Returns
 * false when the text is not a dictionary the decoder accepts; `values` may then
 * be partly written and must be discarded.
 */
bool sammy_sf_dictionary(const char *text, size_t length, sammy_text_encoding encoding, const char *const *keys,
                         size_t n_keys, sammy_sf_value *values);

/* The length of a white-space character the decoder trims at `s[0..n)`, or 0. */
size_t sammy_space_at(const char *s, size_t n, sammy_text_encoding encoding);

/* `s[0..n)` without the white space the decoder trims at both ends. */
void sammy_trim(const char **s, size_t *n, sammy_text_encoding encoding);

/*
 * Rewrites `in` as valid UTF-8 into `out` (capacity `out_cap`), replacing each
 * invalid sequence with U+FFFD as a WHATWG UTF-8 decoder does (what
 * URLSearchParams makes of percent-decoded bytes). Returns the output length, or
 * (size_t)-1 when `out` is too small.
 */
size_t sammy_utf8_sanitize(const unsigned char *in, size_t n, char *out, size_t out_cap);

#endif
