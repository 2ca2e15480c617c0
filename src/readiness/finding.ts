/**
 * One readiness check's verdict, as `explain --json` and `check --json` print
 * it in their `readiness` array (SPEC "Readiness"): the check, its level, the
 * evidence it read (with its numbers) and the fix in the user's context. The
 * level says how certain a failure is: `refused` only where the job will
 * certainly fail (the plan turns it into exit 78 before launch), `warning`
 * where it may.
 */
import type { CheckName } from './check-names.js';

export type FindingLevel = 'ok' | 'warning' | 'refused';

export interface Finding {
  check: CheckName;
  /** level === 'ok'. */
  ok: boolean;
  level: FindingLevel;
  /** What was read and what it means, with the numbers. */
  evidence: string;
  /** What to change, in the user's context (context.ts); null when nothing needs to. */
  fix: string | null;
  /** Whether the user turned the check off (--skip-check): then nothing was checked. */
  skipped: boolean;
}

/** A check's own verdict, before readiness() names its check. */
export type Verdict = Omit<Finding, 'check' | 'ok' | 'skipped'>;

/** One finding in a line: the check, its evidence, and the fix. */
export function findingText(finding: Pick<Finding, 'check' | 'evidence' | 'fix'>): string {
  return `${finding.check}: ${finding.evidence}${finding.fix === null ? '' : `; fix: ${finding.fix}`}`;
}

export const passed = (evidence: string): Verdict => ({ level: 'ok', evidence, fix: null });

export const mayFail = (evidence: string, fix: string): Verdict => ({
  level: 'warning',
  evidence,
  fix,
});

export const willFail = (evidence: string, fix: string): Verdict => ({
  level: 'refused',
  evidence,
  fix,
});
