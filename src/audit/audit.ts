/**
 * `nccl-run audit`: read NCCL's own lines, say per rank what it used and what
 * is wrong (SPEC "Outputs", audit). Exit 0, 75 with a failure, 66 with
 * nothing to read.
 */
import { NothingToReadError } from '../errors.js';
import { EXIT } from '../exit-status.js';
import { type AuditReport, auditJson, auditText } from './audit-report.js';
import { auditFindings } from './findings.js';
import { readNcclLog, type SourceText } from './rank-record.js';

/** SPEC "Exit status" 66: what to do about an empty audit, said once. */
export const NOTHING_TO_READ =
  'no NCCL INFO line to read: NCCL logs its interfaces only at NCCL_DEBUG=INFO; run the job with `nccl-run --nccl-log DIR ...` (or NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,BOOTSTRAP,NET,ENV) and audit DIR';

export function auditSources(sources: readonly SourceText[]): AuditReport {
  const log = readNcclLog(sources);
  if (log.infoLines === 0) {
    const read = sources.map((s) => s.source).join(', ');
    throw new NothingToReadError(`audit: ${NOTHING_TO_READ} (read: ${read})`);
  }
  return { ranks: log.ranks, findings: auditFindings(log) };
}

export function auditOutput(
  report: AuditReport,
  json: boolean,
): { text: string; exitCode: number } {
  const text = json ? `${JSON.stringify(auditJson(report), null, 2)}\n` : auditText(report);
  const failed = report.findings.some((finding) => finding.level === 'failure');
  return { text, exitCode: failed ? EXIT.unreachable : EXIT.ok };
}
