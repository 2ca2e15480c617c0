/**
 * The four commands that plan (run, env, check, explain) on one host, and
 * what each decided (issue 19 item 1, SPEC "The stack": the same decision,
 * trace, variables and warnings everywhere; only what they print differs).
 *
 * Each runs with `--log-format json --log-level debug`, so that its log
 * carries the whole decision ('decided': interface, address, strategy,
 * reason, trace, the variables set and kept), every warning, and the one
 * error line of a refusal. What each prints on stdout is held to the same
 * verdict: explain --json's fields, env's JSON, check --json's decision and
 * warnings, the dry run's export lines.
 */
import { expect } from 'vitest';
import type { CliRun } from './nccl-oracle.js';

/** Runs nccl-run with these arguments on the host under test. */
export type RunCli = (argv: readonly string[]) => Promise<CliRun>;

export interface Verdict {
  exitCode: number;
  /** The 'decided' record: the decision with its trace. */
  decision: unknown;
  set: Record<string, string> | null;
  kept: Record<string, string> | null;
  warnings: string[];
  /** The one error line of a refusal. */
  error: string | null;
}

const LOG = ['--log-format', 'json', '--log-level', 'debug'];

/** Each command's own arguments; --verify none, since no master runs in these layouts. */
export const COMMANDS = {
  explain: ['explain', '--json', '--verify', 'none'],
  env: ['env', '--format', 'json'],
  check: ['check', '--json', '--verify', 'none'],
  run: ['--dry-run', '--verify', 'none'],
} as const;

export type Command = keyof typeof COMMANDS;

interface LogRecord {
  level: number;
  msg: string;
  decision?: unknown;
  set?: Record<string, string>;
  kept?: Record<string, string>;
}

export function verdictOf(run: CliRun): Verdict {
  const records = run.stderr
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogRecord);
  const decided = records.find((record) => record.msg === 'decided');
  return {
    exitCode: run.exitCode,
    decision: decided?.decision ?? null,
    set: decided?.set ?? null,
    kept: decided?.kept ?? null,
    warnings: records.filter((record) => record.level === 40).map((record) => record.msg),
    error: records.find((record) => record.level === 50)?.msg ?? null,
  };
}

/** The four commands' verdicts, each checked against what that command printed. */
export async function fourVerdicts(
  runCli: RunCli,
  torchrun: readonly string[],
): Promise<Record<Command, Verdict>> {
  const entries = await Promise.all(
    (Object.keys(COMMANDS) as Command[]).map(async (command) => {
      const run = await runCli([...COMMANDS[command], ...LOG, ...torchrun]);
      const verdict = verdictOf(run);
      expect(verdict.error === null || verdict.exitCode !== 0, run.stderr).toBe(true);
      if (verdict.exitCode === 0) expectPrinted(command, run.stdout, verdict);
      return [command, verdict] as const;
    }),
  );
  return Object.fromEntries(entries) as Record<Command, Verdict>;
}

/** What the command printed is the verdict its log gave. */
function expectPrinted(command: Command, stdout: string, verdict: Verdict): void {
  const decision = verdict.decision as { trace: unknown } & Record<string, unknown>;
  const { trace, ...fields } = decision;
  const { interface: iface, address, family, strategy, reason } = fields;
  const summary = { interface: iface, address, family, strategy, reason };
  if (command === 'explain') {
    const printed = JSON.parse(stdout);
    expect(printed.decision).toEqual(summary);
    expect(printed.trace).toEqual(trace);
    expect(printed.env).toEqual(verdict.set);
    expect(printed.kept).toEqual(verdict.kept);
    expect(printed.warnings).toEqual(verdict.warnings);
  } else if (command === 'env') {
    expect(JSON.parse(stdout)).toEqual(verdict.set);
  } else if (command === 'check') {
    const printed = JSON.parse(stdout);
    expect(printed.decision).toEqual(summary);
    expect(printed.warnings).toEqual(verdict.warnings);
  } else {
    const exports = stdout
      .split('\n')
      .filter((line) => line.startsWith('export '))
      .map((line) => /^export ([A-Z_]+)='(.*)'$/.exec(line)?.slice(1) ?? [line]);
    expect(Object.fromEntries(exports)).toEqual(verdict.set);
  }
}

/** run, env and check reach explain's verdict (an error's details aside: explain prints them on stdout). */
export function expectSameVerdicts(verdicts: Record<Command, Verdict>): void {
  const { explain, ...others } = verdicts;
  for (const [command, verdict] of Object.entries(others))
    expect({ command, ...verdict }).toEqual({ command, ...explain });
}
