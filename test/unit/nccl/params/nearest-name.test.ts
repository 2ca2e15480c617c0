/** The nearest real name to a misspelt one (src/nccl/params/nearest-name.ts). */
import { describe, expect, it } from 'vitest';
import { editDistance, nearestName } from '../../../../src/nccl/params/nearest-name.js';
import { EVERY_PARAMETER } from '../../../../src/nccl/params/release-parameters.js';

describe('editDistance', () => {
  it.each([
    ['', '', 0],
    ['abc', '', 3],
    ['', 'abc', 3],
    ['NSOCS', 'NSOCKS', 1],
    ['DIABLE', 'DISABLE', 1],
    ['IFANME', 'IFNAME', 1],
    ['kitten', 'sitting', 3],
    ['ca', 'abc', 3],
  ] as const)('%s → %s: %i', (a, b, edits) => {
    expect(editDistance(a, b)).toBe(edits);
    expect(editDistance(b, a)).toBe(edits);
  });
});

describe('nearestName', () => {
  it.each([
    ['NCCL_NSOCS_PERTHREAD', 'NCCL_NSOCKS_PERTHREAD'],
    ['NCCL_SOCKET_IFANME', 'NCCL_SOCKET_IFNAME'],
    ['NCCL_IB_DISABLED', 'NCCL_IB_DISABLE'],
    ['NCCL_P2P_DISABEL', 'NCCL_P2P_DISABLE'],
    ['NCCL_DEBUG_SUBSYSTEM', 'NCCL_DEBUG_SUBSYS'],
    ['NCCL_PORT_RANGE', null],
    ['NCCL_COMPLETELY_MADE_UP', null],
  ] as const)('%s → %s', (name, nearest) => {
    expect(nearestName(name, EVERY_PARAMETER)).toBe(nearest);
  });

  it('prefers a candidate the preferred test holds, among the equally near', () => {
    const candidates = ['NCCL_AB', 'NCCL_AC'];
    expect(nearestName('NCCL_AX', candidates)).toBe('NCCL_AB');
    expect(nearestName('NCCL_AX', candidates, (name) => name === 'NCCL_AC')).toBe('NCCL_AC');
  });
});
