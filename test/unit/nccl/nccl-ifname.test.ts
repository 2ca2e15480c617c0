import { describe, expect, it } from 'vitest';
import {
  type NcclIfname,
  ncclHonoursIfname,
  ncclIfnameMatches,
  parseNcclIfname,
} from '../../../src/nccl/nccl-ifname.js';

describe('parseNcclIfname reads the list as NCCL parseStringList does', () => {
  it.each<[string, NcclIfname]>([
    ['eth0', { mode: 'include', exact: false, names: [{ name: 'eth0' }] }],
    ['^docker,lo', { mode: 'exclude', exact: false, names: [{ name: 'docker' }, { name: 'lo' }] }],
    ['=eth0', { mode: 'include', exact: true, names: [{ name: 'eth0' }] }],
    ['^=eth0,eth1', { mode: 'exclude', exact: true, names: [{ name: 'eth0' }, { name: 'eth1' }] }],
    // findInterfaces takes `=` after `^` only, and parseStringList strips nothing: `^eth0` is a name.
    ['=^eth0', { mode: 'include', exact: true, names: [{ name: '^eth0' }] }],
    [
      'mlx5_0:1,mlx5_1:2',
      {
        mode: 'include',
        exact: false,
        names: [
          { name: 'mlx5_0', port: 1 },
          { name: 'mlx5_1', port: 2 },
        ],
      },
    ],
    // atoi: no digits reads 0; trailing junk after digits is ignored.
    ['eth0:', { mode: 'include', exact: false, names: [{ name: 'eth0', port: 0 }] }],
    [
      'eth0:abc,eth1',
      { mode: 'include', exact: false, names: [{ name: 'eth0', port: 0 }, { name: 'eth1' }] },
    ],
    ['eth0:12x', { mode: 'include', exact: false, names: [{ name: 'eth0', port: 12 }] }],
    [',,eth0,', { mode: 'include', exact: false, names: [{ name: 'eth0' }] }],
    [':1,eth0', { mode: 'include', exact: false, names: [{ name: 'eth0' }] }],
    // No trimming: NCCL keeps every character up to the comma.
    ['eth0, eth1', { mode: 'include', exact: false, names: [{ name: 'eth0' }, { name: ' eth1' }] }],
    ['^', { mode: 'exclude', exact: false, names: [] }],
    ['', { mode: 'include', exact: false, names: [] }],
  ])('%j', (value, parsed) => {
    expect(parseNcclIfname(value)).toEqual(parsed);
  });

  it('stops after MAX_IFS (16) entries', () => {
    const value = Array.from({ length: 20 }, (_, i) => `eth${i}`).join(',');
    const { names } = parseNcclIfname(value);
    expect(names).toHaveLength(16);
    expect(names.at(-1)).toEqual({ name: 'eth15' });
  });
});

describe('ncclIfnameMatches (matchIfList XOR searchNot)', () => {
  it.each<[string, string, boolean]>([
    ['eth', 'eth0', true],
    ['eth', 'eth10', true],
    ['eth', 'veth0a1b', false],
    // Why nccl-run exports `=NAME`: a plain name is a prefix.
    ['bond0', 'bond0.2973', true],
    ['=bond0', 'bond0.2973', false],
    ['=bond0', 'bond0', true],
    ['^docker,lo', 'docker0', false],
    ['^docker,lo', 'lo', false],
    ['^docker,lo', 'eth0', true],
    ['^=docker0', 'docker0', false],
    ['^=docker0', 'docker01', true],
    ['^=docker0', 'lo', true],
    // `=^eth1` is the exact name "^eth1": no interface has it.
    ['=^eth1', 'eth1', false],
    // Interfaces are matched with port -1, which matches any port.
    ['eth0:5', 'eth0', true],
    ['ib,eth', 'ib0', true],
    ['ib,eth', 'ens3', false],
    // An empty list matches everything; inverted, nothing.
    ['', 'ens3', true],
    ['^', 'ens3', false],
  ])('%j matches %s: %s', (value, ifname, expected) => {
    expect(ncclIfnameMatches(parseNcclIfname(value), ifname)).toBe(expected);
  });
});

describe('ncclHonoursIfname (ncclFindInterfaces: strlen(env) > 1)', () => {
  it.each([
    ['', false],
    ['e', false],
    ['^', false],
    ['ib', true],
    ['=eth0', true],
  ])('%j → %s', (value, expected) => {
    expect(ncclHonoursIfname(value)).toBe(expected);
  });
});
