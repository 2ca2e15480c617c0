/**
 * What verify-plan.ts adds to a failed check: where this host's own
 * reverse-path filter may be what dropped a peer's packets (the readiness
 * finding, test/unit/readiness/rp-filter.test.ts, proves the rule on a real
 * kernel), the failure says so; elsewhere it adds nothing.
 */
import { describe, expect, it } from 'vitest';
import type { Plan } from '../../../src/plan/plan.js';
import type { Finding } from '../../../src/readiness/finding.js';
import type { PeerResult, VerifyReport } from '../../../src/verify/report.js';
import { reversePathSuspect } from '../../../src/verify/verify-plan.js';

const strict: Finding = {
  check: 'rp-filter',
  ok: false,
  level: 'warning',
  evidence:
    'rp_filter 1 on ens3f0 (the larger of all=1 and ens3f0=1): strict on a host also on eno1, and the route back to 198.18.30.2 leaves by eno1',
  fix: 'loose filtering (2)',
  skipped: false,
};
const loose: Finding = { ...strict, ok: true, level: 'ok', evidence: 'rp_filter 2', fix: null };

const planWith = (finding: Finding) =>
  ({ readiness: { findings: [finding], refused: null } }) as unknown as Plan;

function reportWith(result: Partial<PeerResult>): VerifyReport {
  return {
    results: [
      {
        peer: 'node02',
        address: '198.18.30.2',
        port: 40_000,
        ok: false,
        error: null,
        seenSource: null,
        bandwidthMbps: null,
        elapsedMs: 5_000,
        check: 'probe',
        detail: null,
        inbound: null,
        ...result,
      },
    ],
  } as unknown as VerifyReport;
}

describe('reversePathSuspect', () => {
  it('names the filter when a strict one was found and a leg timed out, either way', () => {
    expect(reversePathSuspect(planWith(strict), reportWith({ error: 'timed out' }))).toBe(
      `what timed out may be this host's reverse-path filter, not a firewall: ${strict.evidence}; fix: loose filtering (2)`,
    );
    const inbound = reportWith({
      inbound: { ok: false, error: 'timed out', detail: null, source: null, bandwidthMbps: null },
    });
    expect(reversePathSuspect(planWith(strict), inbound)).toMatch(/^what timed out may be/);
  });

  it('adds nothing for a refusal, or where the filter is loose', () => {
    expect(reversePathSuspect(planWith(strict), reportWith({ error: 'refused' }))).toBeNull();
    expect(reversePathSuspect(planWith(loose), reportWith({ error: 'timed out' }))).toBeNull();
  });
});
