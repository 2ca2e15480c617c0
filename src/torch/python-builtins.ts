/**
 * The Python builtins torchrun reads its values with: int() and float() for
 * argparse's `type=int`/`type=float` and `check_env`'s `bool(int(...))`,
 * which accept surrounding whitespace, a sign, `_` between digits, leading
 * zeros and any Unicode decimal digit (fullwidth `２９５００` from an IME);
 * str.strip() for rendezvous endpoints and configs.
 */

/** Python's str.isspace(): Unicode White_Space plus U+001C-U+001F, without the U+FEFF that JS's \s adds. */
const SPACE_CHARS =
  '[\\t-\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]';
const SPACE = `${SPACE_CHARS}*`;
const SURROUNDING_SPACE = new RegExp(`^${SPACE}|${SPACE}$`, 'gu');
const DIGITS = '\\p{Nd}(?:_?\\p{Nd})*';
const INT = new RegExp(`^${SPACE}([+-]?)(${DIGITS})${SPACE}$`, 'u');
const FLOAT = new RegExp(
  `^${SPACE}[+-]?(?:(?:${DIGITS}(?:\\.(?:${DIGITS})?)?|\\.${DIGITS})(?:e[+-]?${DIGITS})?|inf(?:inity)?|nan)${SPACE}$`,
  'iu',
);
const DECIMAL_DIGIT = /\p{Nd}/u;

/** The integer Python's int(text) gives, or null where int() raises ValueError. */
export function parsePythonInt(text: string): number | null {
  const match = INT.exec(text);
  if (match === null) return null;
  const digits = [...(match[2] as string).replaceAll('_', '')].map(decimalDigitValue).join('');
  return Number(`${match[1]}${digits}`) + 0;
}

/** Python's str.strip() with no argument. */
export function pythonStrip(text: string): string {
  return text.replace(SURROUNDING_SPACE, '');
}

/** Whether Python's float(text) accepts the text. */
export function isPythonFloat(text: string): boolean {
  return FLOAT.test(text);
}

/**
 * Unicode encodes every set of decimal digits (General_Category Nd) as a
 * contiguous run of ten, 0 to 9 (The Unicode Standard, 4.6 "Numeric Value"),
 * so a digit's value is its distance from the start of its block of runs, mod 10.
 */
function decimalDigitValue(digit: string): number {
  const codePoint = digit.codePointAt(0) as number;
  let first = codePoint;
  while (DECIMAL_DIGIT.test(String.fromCodePoint(first - 1))) first -= 1;
  return (codePoint - first) % 10;
}
