/** Values written as words a POSIX shell reads back byte for byte. */

/**
 * POSIX single quotes keep every byte but the single quote itself literal
 * ($, backticks, backslashes, newlines, non-ASCII); a `'` closes the quote,
 * is written escaped, and reopens it. Safe to paste into sh, bash and zsh.
 */
export function singleQuoted(value: string): string {
  return `'${value.replaceAll("'", "'\\''")}'`;
}

/** A word for a shell command line: plain words stay unquoted for reading. */
export function shellQuote(value: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(value) ? value : singleQuoted(value);
}
