/**
 * Turns a failed report into the one-line error of SPEC "Verification": the
 * interface, the local address, the peer's address and port, and the error
 * class; then one detail line per failing peer. The report rides along so
 * that `check --json` can print every peer's result even on failure.
 */
import { UnreachableError } from '../errors.js';
import { endpointText } from '../reach/endpoint.js';
import type { PeerResult, VerifyReport } from './report.js';

export class VerificationFailedError extends UnreachableError {
  readonly report: VerifyReport;
  constructor(message: string, details: string[], report: VerifyReport) {
    super(message, details);
    this.report = report;
  }
}

export function failureOf(report: VerifyReport, localProblem?: string): VerificationFailedError {
  const via = `via ${report.interface} (${report.localAddress})`;
  if (localProblem !== undefined) {
    return new VerificationFailedError(`verification failed ${via}: ${localProblem}`, [], report);
  }
  const failing = report.results.filter((result) => !result.ok);
  const lines = failing.map(describe);
  const more = failing.length > 1 ? ` (and ${failing.length - 1} more, below)` : '';
  return new VerificationFailedError(
    `verification failed ${via}: ${lines[0] ?? 'no check passed'}${more}`,
    lines,
    report,
  );
}

function describe(result: PeerResult): string {
  const where = endpointText({ address: result.address ?? '?', port: result.port });
  const why = (error: string | null, detail: string | null) =>
    `${error ?? 'failed'}${detail && detail !== error ? ` (${detail})` : ''}`;
  switch (result.check) {
    case 'bind':
      return `this node hosts the rendezvous of ${result.peer}, but ${where} cannot be bound: ${why(result.error, result.detail)}; torchrun's store would fail to start`;
    case 'listen':
      return `the probe service cannot bind ${where}: ${why(result.error, result.detail)}`;
    case 'connect':
      return `cannot reach the master ${result.peer}'s store (as torch's TCPStore reaches it) at ${where}: ${why(result.error, result.detail)}`;
    case 'data path':
      return `the master ${result.peer}'s store answers, but not at ${where} over the chosen network: ${why(result.error, result.detail)}`;
    case 'register':
      return result.error === 'not registered'
        ? `${result.peer} never registered: ${result.detail}`
        : `cannot register with the master's probe service (${result.peer} at ${where}, reached as torch's store will be): ${why(result.error, result.detail)}`;
    case 'probe': {
      const legs: string[] = [];
      if (result.error !== null)
        legs.push(`this node → ${result.peer}: ${why(result.error, result.detail)}`);
      if (result.inbound && !result.inbound.ok) {
        legs.push(
          `${result.peer} → this node: ${why(result.inbound.error, result.inbound.detail)}`,
        );
      }
      return `peer ${result.peer} at ${where}: ${legs.join('; ')}`;
    }
  }
}
