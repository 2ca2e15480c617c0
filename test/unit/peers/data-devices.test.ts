import { describe, expect, it } from 'vitest';
import { fitDevices } from '../../../src/peers/data-devices.js';
import { encodeMessage, MAX_DATA_DEVICES, type Register } from '../../../src/probe/protocol.js';
import { registration } from '../../fixtures/registration.js';

const longestMunge = `MUNGE:${'A'.repeat(2_041)}:`;

function claimWith(name: string, device: (i: number) => string): Omit<Register, 'v' | 'munge'> {
  const {
    v: _v,
    munge: _munge,
    ...claim
  } = registration({
    node: { name, rank: 1 },
    devices: Array.from({ length: MAX_DATA_DEVICES }, (_, i): [string, string, number] => [
      device(i),
      `2001:db8:ffff:ffff:ffff:ffff:ffff:${(i + 1).toString(16)}`,
      65_535,
    ]),
  });
  return claim;
}

describe('fitDevices', () => {
  it("keeps NCCL's 15 further devices with plain names, and the registration fits with any MUNGE credential", () => {
    const claim = claimWith('gpu-node-0042.cluster.example', (i) => `ens${i}f0`);
    expect(fitDevices(claim)).toEqual([]);
    expect(claim.devices).toHaveLength(MAX_DATA_DEVICES);
    expect(() => encodeMessage({ ...claim, munge: longestMunge })).not.toThrow();
  });

  it('drops the last devices, and names them, where escaped names would make the registration too long', () => {
    const claim = claimWith(
      '\u0001'.repeat(253),
      (i) => `\u0001${'x'.repeat(12)}${i.toString(16).padStart(2, '0')}`,
    );
    const dropped = fitDevices(claim);
    expect(dropped.length).toBeGreaterThan(0);
    expect((claim.devices ?? []).length + dropped.length).toBe(MAX_DATA_DEVICES);
    // The last ones go, in NCCL's order: the first devices are the ones channels use first.
    expect(dropped.at(-1)).toBe(`\u0001${'x'.repeat(12)}0e`);
    expect(() => encodeMessage({ ...claim, munge: longestMunge })).not.toThrow();
  });
});
