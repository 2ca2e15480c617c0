/**
 * The GPU check's rows (issue 31): each check a verdict and the evidence
 * that decided it, and the table summary.txt prints.
 */

export type Status = 'pass' | 'fail' | 'skip';

export interface Row {
  check: string;
  status: Status;
  detail: string;
}

/** A row that passes when `ok`, else fails; the detail says why either way. */
export function row(check: string, ok: boolean, detail: string): Row {
  return { check, status: ok ? 'pass' : 'fail', detail };
}

/** A check that did not run here, and why. */
export function skip(check: string, detail: string): Row {
  return { check, status: 'skip', detail };
}

/** The summary's table: one line per check, its detail after. */
export function renderTable(rows: Row[]): string {
  const width = Math.max(...rows.map((r) => r.check.length), 5);
  return rows
    .map((r) => `${r.check.padEnd(width)}  ${r.status.toUpperCase().padEnd(4)}  ${r.detail}`)
    .join('\n');
}
