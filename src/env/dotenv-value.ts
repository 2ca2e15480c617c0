/**
 * SPEC "Outputs", `env --format dotenv`: `KEY=value` with the value
 * unquoted, as the readers of such files take it. They differ in everything
 * but the plain case, so a value is written only when all of them read it
 * back unchanged:
 * - `docker run --env-file` keeps everything after the first `=` literally
 *   (quotes included: a quoted `'=eth0'` reached NCCL with its quotes);
 * - compose's `env_file` interpolates `$NAME` and ends a value at ` #`;
 * - systemd's `EnvironmentFile` unescapes backslashes, strips surrounding
 *   blanks and opens quotes at a value's start;
 * - dotenv (nccl-run's own env file) ends an unquoted value at `#`, trims
 *   blanks and strips a leading quote that the value also ends with.
 * None of them carries a line break in an unquoted value.
 */

export type DotenvValue = { text: string } | { unwritable: string };

/** Why no reader above takes this value back unchanged unquoted, or null. */
function unquotedTrouble(value: string): string | null {
  if (/[\r\n]/.test(value)) return 'a line break';
  if (/^\s|\s$/.test(value)) return 'blanks at its start or end';
  if (/^['"`]/.test(value)) return 'a leading quote';
  if (value.includes('#')) return 'a #';
  if (value.includes('\\')) return 'a backslash';
  if (value.includes('$')) return 'a $';
  return null;
}

/** The text after `KEY=`, or why it cannot be written unquoted. */
export function dotenvValue(value: string): DotenvValue {
  const trouble = unquotedTrouble(value);
  return trouble === null
    ? { text: value }
    : {
        unwritable: `${JSON.stringify(value)} holds ${trouble}, which KEY=value files do not keep`,
      };
}
