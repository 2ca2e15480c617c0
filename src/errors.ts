/**
 * Typed errors and the exit-status table of SPEC.md ("Exit status").
 * Only `cli/main.ts` turns these into a status; everything else throws.
 */
import type { TraceEntry } from './resolve/decision.js';

export const EXIT = {
  ok: 0,
  usage: 64,
  unresolvableMaster: 68,
  noInterface: 69,
  unreachable: 75,
  config: 78,
  /** EX_SOFTWARE (sysexits.h): a bug in nccl-run itself, never a user's mistake. */
  internal: 70,
  notExecutable: 126,
  notFound: 127,
} as const;

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

/** The master's name does not resolve. Exit 68. */
export class UnresolvableMasterError extends NcclRunError {
  readonly exitCode = EXIT.unresolvableMaster;
}

/** No usable interface, or an explicit one is missing, down or unusable. Exit 69. */
export class NoInterfaceError extends NcclRunError {
  readonly exitCode = EXIT.noInterface;
  /** The chain's trace up to the failure, for explain to print. */
  trace: TraceEntry[] = [];
}

/** The master or a peer is unreachable over the chosen interface. Exit 75. */
export class UnreachableError extends NcclRunError {
  readonly exitCode = EXIT.unreachable;
}

/** The launcher could not be started: 127 not found, 126 not executable. */
export class LauncherError extends NcclRunError {
  readonly exitCode: number;
  constructor(message: string, exitCode: typeof EXIT.notFound | typeof EXIT.notExecutable) {
    super(message);
    this.exitCode = exitCode;
  }
}
