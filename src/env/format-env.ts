/**
 * SPEC "Outputs", `env`: the variables nccl-run sets, as shell `export`
 * lines safe to eval, as a dotenv file, or as one JSON object. Every format
 * keeps the order it is given (SPEC's table, exported-variables.ts).
 */

import { ConfigError } from '../errors.js';
import type { Options } from '../options/option-table.js';
import { singleQuoted } from '../shell-words.js';
import { dotenvValue } from './dotenv-value.js';

/** A name `export NAME=` and a dotenv line both accept unquoted (POSIX: letters, digits, underscore). */
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Prints variables as `export KEY='value'` (safe to eval), dotenv KEY=value, or one JSON object. */
export function formatEnv(variables: Record<string, string>, format: Options['format']): string {
  const entries = Object.entries(variables);
  for (const [name, value] of entries) checkVariable(name, value);
  if (format === 'json') return `${JSON.stringify(variables, null, 2)}\n`;
  const line = format === 'shell' ? shellLine : dotenvLine;
  return entries.map(([name, value]) => `${line(name, value)}\n`).join('');
}

/** Always quoted: an `eval`ed export line must not depend on what the value looks like. */
function shellLine(name: string, value: string): string {
  return `export ${name}=${singleQuoted(value)}`;
}

function dotenvLine(name: string, value: string): string {
  const written = dotenvValue(value);
  if ('unwritable' in written) {
    throw new ConfigError(
      `${name} cannot be written as dotenv: ${written.unwritable}; use --format shell or --format json`,
    );
  }
  return `${name}=${written.text}`;
}

/** An environment can hold neither a NUL (execve's strings end at it) nor a name outside POSIX's. */
function checkVariable(name: string, value: string): void {
  if (!VARIABLE_NAME.test(name)) {
    throw new ConfigError(
      `'${name}' is not a variable name a shell can export; expected letters, digits and _`,
    );
  }
  if (value.includes('\0')) {
    throw new ConfigError(`${name} holds a NUL character, which no environment variable can carry`);
  }
}
