/**
 * POSIX single-quoting: safe to paste into sh/bash/zsh whatever the value
 * holds ($, backticks, quotes, newlines). Plain words stay unquoted for reading.
 */
export function shellQuote(value: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(value)) return value;
  return `'${value.replaceAll("'", "'\\''")}'`;
}
