/** HTTP header lookup by case-insensitive name (XHR lower-cases response headers; dash.js writes `CMCD-Status`). */
export function headerName(headers: Record<string, string> | undefined, name: string): string | null {
  if (!headers) return null;
  const lower = name.toLowerCase();
  return Object.keys(headers).find((k) => k.toLowerCase() === lower) ?? null;
}

export function headerValue(headers: Record<string, string> | undefined, name: string): string | null {
  const key = headerName(headers, name);
  return key === null ? null : headers![key]!;
}
