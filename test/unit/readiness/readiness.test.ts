/** The step: every check in order, skipped ones saying so, `ok` following the level. */
import { describe, expect, it } from 'vitest';
import { CHECK_NAMES } from '../../../src/readiness/check-names.js';
import { readiness } from '../../../src/readiness/readiness.js';
import { fakeGpus, jobNeeds, nodeFacts } from '../../fixtures/readiness.js';

describe('readiness', () => {
  it('gives one finding per check, in order, all ok on a healthy node', () => {
    const findings = readiness(jobNeeds(), nodeFacts());
    expect(findings.map((finding) => finding.check)).toEqual([...CHECK_NAMES]);
    expect(
      findings.every((finding) => finding.ok && finding.level === 'ok' && finding.fix === null),
    ).toBe(true);
  });

  it('a skipped check checks nothing and says so, even where it would refuse', () => {
    const node = nodeFacts({ gpus: fakeGpus(4) });
    expect(readiness(jobNeeds(), node).find((f) => f.check === 'gpus')?.level).toBe('refused');
    const findings = readiness(jobNeeds(), node, ['gpus', 'mtu']);
    expect(findings.find((f) => f.check === 'gpus')).toEqual({
      check: 'gpus',
      ok: true,
      level: 'ok',
      evidence: 'skipped (--skip-check)',
      fix: null,
      skipped: true,
    });
    expect(findings.filter((f) => f.skipped).map((f) => f.check)).toEqual(['mtu', 'gpus']);
  });

  it('ok is false for a warning as for a refusal', () => {
    const node = nodeFacts({ memlock: { soft: 65536, hard: 65536 } });
    expect(readiness(jobNeeds(), node).find((f) => f.check === 'memlock')).toMatchObject({
      ok: false,
      level: 'warning',
    });
  });
});
