// RFC 9110 section 14.2: a server MAY ignore a Range header it cannot parse and send
// the whole representation (200). Only a well-formed byte range that lies outside
// the file is answered 416. The range reader (file-head.ts) parses leniently
// (`bytes=0x10-0x20` would read as 0-0, `bytes=abc` would get 416), so the header is
// checked here first and handed on in one canonical spelling.

const RANGES_SPECIFIER = /^bytes=(.*)$/i;
const INT_RANGE = /^(\d+)-(\d*)$/;
const SUFFIX_RANGE = /^-\d+$/;

/**
 * `header` as `bytes=<spec>,<spec>` if it is a syntactically valid byte range set
 * (RFC 9110 14.1.1), else null (the caller then ignores it).
 */
export function canonicalBytesRange(header: string): string | null {
  const m = RANGES_SPECIFIER.exec(header.trim());
  if (m === null) return null;
  // 1#range-spec: a comma list whose empty elements are allowed and skipped (RFC 9110 5.6.1).
  const specs = m[1]!
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (specs.length === 0) return null;
  const valid = specs.every((spec) => {
    if (SUFFIX_RANGE.test(spec)) return true;
    const int = INT_RANGE.exec(spec);
    if (int === null) return false;
    // last-pos < first-pos makes the range invalid (RFC 9110 14.1.1), not unsatisfiable.
    return int[2] === '' || BigInt(int[2]!) >= BigInt(int[1]!);
  });
  return valid ? `bytes=${specs.join(',')}` : null;
}
