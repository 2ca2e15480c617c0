/**
 * Typed errors, each with its exit status (exit-status.ts). Only
 * `cli/main.ts` turns these into a status; everything else throws.
 */
import { EXIT } from './exit-status.js';
import { type Origin, originText } from './origin.js';

export abstract class NcclRunError extends Error {
  abstract readonly exitCode: number;
  /** Extra lines printed after the one-line message (an interface table, a trace). */
  details: string[] = [];
  constructor(message: string, details: string[] = []) {
    super(message);
    this.name = new.target.name;
    this.details = details;
  }
}

/** Bad command line: unknown subcommand, bad option value. Exit 64. */
export class UsageError extends NcclRunError {
  readonly exitCode = EXIT.usage;
}

/** Bad configuration: an NCCL_RUN_* variable, the env file, conflicting settings. Exit 78. */
export class ConfigError extends NcclRunError {
  readonly exitCode = EXIT.config;
}

/** `audit` found no NCCL INFO line, or could not read a path it was given. Exit 66. */
export class NothingToReadError extends NcclRunError {
  readonly exitCode = EXIT.noInput;
}

/** The master's name does not resolve. Exit 68. */
export class UnresolvableMasterError extends NcclRunError {
  readonly exitCode = EXIT.unresolvableMaster;
}

/** No usable interface, or an explicit one is missing, down or unusable. Exit 69. */
export class NoInterfaceError extends NcclRunError {
  readonly exitCode = EXIT.noInterface;
}

/** The master or a peer is unreachable over the chosen interface. Exit 75. */
export class UnreachableError extends NcclRunError {
  readonly exitCode = EXIT.unreachable;
}

/** `problem` with a setting, 64 or 78 by where the setting came from. */
export function settingError(origin: Origin, problem: string): UsageError | ConfigError {
  const line = `${originText(origin)}: ${problem}`;
  return origin.from === 'flag' || origin.from === 'argv'
    ? new UsageError(line)
    : new ConfigError(line);
}

/** A setting's bad value: what it was and what is valid. */
export function badValue(
  origin: Origin,
  value: string,
  expected: string,
): UsageError | ConfigError {
  return settingError(origin, `bad value '${value}': ${expected}`);
}

/** The launcher could not be started: 127 not found, 126 not executable. */
export class LauncherError extends NcclRunError {
  readonly exitCode: number;
  constructor(message: string, exitCode: (typeof EXIT)['notFound' | 'notExecutable']) {
    super(message);
    this.exitCode = exitCode;
  }
}
