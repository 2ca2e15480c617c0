/**
 * The one catch of main(): a typed error becomes one line on stderr and the
 * exit status of its class (SPEC "Exit status"). Details (an interface
 * table, a trace) go into the JSON record, or as plain lines under a
 * human-readable message.
 */
import { NcclRunError } from '../errors.js';
import { EXIT } from '../exit-status.js';
import type { Logger } from '../log.js';
import type { Options } from '../options/option-table.js';

/** The logger, once the options have said which; null before (a bad option, a bad env file). */
export interface FailureLog {
  logger: Logger | null;
  format: Options['logFormat'];
}

export function reportFailure(
  error: unknown,
  { logger, format }: FailureLog,
  { details: withDetails = true } = {},
): number {
  if (error instanceof NcclRunError) {
    const details = withDetails && error.details.length > 0 ? error.details : undefined;
    // Even --log-level silent gets the one line: a failure never passes unsaid.
    const logged = logger?.isLevelEnabled('error') ? logger : null;
    if (logged && format === 'json') {
      logged.error({ details }, error.message);
      return error.exitCode;
    }
    if (logged) logged.error(error.message);
    else process.stderr.write(`nccl-run: ${error.message}\n`);
    for (const line of details ?? []) process.stderr.write(`  ${line}\n`);
    return error.exitCode;
  }
  process.stderr.write(
    `nccl-run: internal error (please report it): ${(error as Error)?.stack ?? String(error)}\n`,
  );
  return EXIT.internal;
}
