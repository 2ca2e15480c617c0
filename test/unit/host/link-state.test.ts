import { describe, expect, it } from 'vitest';
import { isUp } from '../../../src/host/link-state.js';
import { loadFacts } from '../../fixtures/facts/facts-fixtures.js';

describe('isUp follows the kernel IFF_RUNNING rule NCCL filters on', () => {
  // Pairs as /sys/class/net reported them on this project's kernel: lo and an
  // empty bridge "unknown"/1, a veth whose peer is down "lowerlayerdown"/0, a
  // tun with no process "down"/0, anything admin-down "down"/EINVAL (null).
  it.each([
    ['up', true, true],
    ['unknown', true, true],
    ['unknown', null, true],
    ['unknown', false, false],
    ['down', null, false],
    ['down', false, false],
    ['lowerlayerdown', false, false],
    ['dormant', true, false],
    ['notpresent', null, false],
    [null, true, true],
    [null, null, false],
    [null, false, false],
  ] as const)('operstate %s, carrier %s → %s', (operstate, carrier, up) => {
    const base = loadFacts('docker-host').interfaces.find((i) => i.name === 'eno1');
    if (base === undefined) throw new Error('docker-host has no eno1');
    expect(isUp({ ...base, operstate, carrier })).toBe(up);
  });
});
