/**
 * explain's Unmanaged line (src/cli/render.ts): where NCCL or Gloo left to
 * themselves would bind a link-local address (EKS's pod-id-link0,
 * 169.254.170.23/32, in aws-samples/aws-do-eks PR #54 and dstack #3069),
 * explain says why that fails; nccl-run itself never chooses one (SPEC "Usable").
 */
import { describe, expect, it } from 'vitest';
import { unmanagedText } from '../../../src/cli/render.js';

describe('unmanagedText', () => {
  it.each([
    [{ interface: 'ens5', address: '198.18.40.5' }, 'ens5 198.18.40.5'],
    [
      { interface: 'pod-id-link0', address: '169.254.170.23' },
      'pod-id-link0 169.254.170.23 (link-local: no peer can reach it; nccl-run never chooses it)',
    ],
    [
      { interface: 'eth1', address: 'fe80::1' },
      'eth1 fe80::1 (link-local: no peer can reach it; nccl-run never chooses it)',
    ],
    [null, 'nothing (no interface found)'],
  ])('%o', (bind, text) => {
    expect(unmanagedText(bind)).toBe(text);
  });
});
