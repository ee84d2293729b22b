// A URL path that could name something outside the served folder is refused before
// routing (4xx), whatever the later layers would make of it (static-files.ts checks
// the real path again); one answer for every variant.

/** Why a request path is refused, or null if it is an ordinary path. */
export function hostilePathReason(url: string): string | null {
  const end = url.search(/[?#]/);
  const raw = end === -1 ? url : url.slice(0, end);
  if (raw.includes('\\')) return 'backslash in path';
  if (/%(?![0-9a-f]{2})/i.test(raw)) return 'malformed percent-encoding';
  let path: string;
  try {
    path = decodeURIComponent(raw);
  } catch {
    return 'malformed percent-encoding';
  }
  if (path.includes('\0')) return 'NUL in path';
  if (/[\u0000-\u001f\u007f]/.test(path)) return 'control character in path';
  if (path.includes('\\')) return 'encoded backslash in path';
  // After one decode no escape is left in a real file name here; what remains was
  // encoded twice, to slip a dot, slash or NUL past a single decode.
  if (/%[0-9a-f]{2}/i.test(path)) return 'double-encoded path';
  if (path.split('/').some((segment) => segment === '..' || segment === '.')) return 'dot segment in path';
  return null;
}
