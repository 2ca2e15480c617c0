/**
 * Writes a value so that dotenv's own parser (dotenv 17, lib/main.js parse)
 * reads back exactly that value. What that parser does decides what each
 * form can hold:
 * - before parsing, every \r\n and lone \r becomes \n, so a carriage return
 *   survives only as the escape `\r`, which only double quotes expand;
 * - single quotes and backticks keep everything up to the closing quote
 *   literally, newlines included;
 * - double quotes expand `\n` and `\r` and nothing else (no `\"`, no `\\`),
 *   so they cannot hold a `"` nor a literal backslash followed by n or r;
 * - any quote accepts a backslash-escaped closing quote (`'(?:\\'|[^'])*'`),
 *   so a value ending in a backslash may swallow the lines after it: only
 *   the unquoted form is safe for it;
 * - unquoted, the value ends at `#` or the line's end and loses surrounding
 *   blanks, and a leading quote character would be taken as quoting.
 */

export type DotenvValue = { text: string } | { unwritable: string };

/** Plain words, written bare; `=` and `^` are quoted so NCCL's syntax reads clearly. */
const PLAIN = /^[\w.,:/@%+-]+$/;

/** What the unquoted form reads back unchanged (see above). */
const BARE = /^(?![\s'"`])[^#\r\n]*(?<!\s)$/;

/** The text after `KEY=`, or why dotenv cannot represent the value. */
export function dotenvValue(value: string): DotenvValue {
  if (PLAIN.test(value)) return { text: value };
  if (value.endsWith('\\')) {
    if (BARE.test(value)) return { text: value };
    return {
      unwritable:
        'it ends in a backslash, which escapes any closing quote, and it cannot go unquoted (it has a line break, a #, a leading quote or surrounding blanks)',
    };
  }
  if (!value.includes('\r')) {
    if (!value.includes("'")) return { text: `'${value}'` };
    if (!value.includes('`')) return { text: `\`${value}\`` };
  }
  if (value.includes('"') || /\\[nr]/.test(value)) {
    const why = value.includes('\r') ? 'a carriage return' : "both ' and `";
    return {
      unwritable: `it needs double quotes (it holds ${why}), which cannot hold a " or a literal \\n or \\r`,
    };
  }
  return { text: `"${value.replaceAll('\n', '\\n').replaceAll('\r', '\\r')}"` };
}
