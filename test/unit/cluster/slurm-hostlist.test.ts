import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { expandHostlist } from '../../../src/cluster/slurm-hostlist.js';

describe("expandHostlist: the examples in Slurm's own documentation and tests", () => {
  // hostlist.h (hostlist_create), Slurm::Hostlist(3pm), slurm_hostlist_create(3),
  // testsuite/slurm_unit/common/hostlist/*-test.c
  it.each([
    ['alpha,beta,gamma', ['alpha', 'beta', 'gamma']],
    [
      'tux[0-5,12,20-25]',
      ['tux0', 'tux1', 'tux2', 'tux3', 'tux4', 'tux5', 'tux12'].concat(
        ['20', '21', '22', '23', '24', '25'].map((n) => `tux${n}`),
      ),
    ],
    ['node1,node[2-5,12]', ['node1', 'node2', 'node3', 'node4', 'node5', 'node12']],
    ['linux[1-3,6]', ['linux1', 'linux2', 'linux3', 'linux6']],
    ['host[1-3],host5', ['host1', 'host2', 'host3', 'host5']],
    ['two[1-2]', ['two1', 'two2']],
    ['b[1-3],d[1,3-4],e1', ['b1', 'b2', 'b3', 'd1', 'd3', 'd4', 'e1']],
    ['node21,node[27-34]', ['node21', ...[27, 28, 29, 30, 31, 32, 33, 34].map((n) => `node${n}`)]],
  ])('%s', (text, hosts) => {
    expect(expandHostlist(text)).toEqual(hosts);
  });

  it('linux[0000-1023]: leading zeros fix the width of every name', () => {
    const hosts = expandHostlist('linux[0000-1023]');
    expect(hosts).toHaveLength(1024);
    expect([hosts[0], hosts[9], hosts[10], hosts[1023]]).toEqual([
      'linux0000',
      'linux0009',
      'linux0010',
      'linux1023',
    ]);
  });
});

describe('expandHostlist: the rules of hostlist.c', () => {
  it.each([
    // The padding width is the low bound's (range->width = strlen(lo)).
    ['n[01-10]', ['n01', 'n02', 'n03', 'n04', 'n05', 'n06', 'n07', 'n08', 'n09', 'n10']],
    ['n[8-10]', ['n8', 'n9', 'n10']],
    ['n[008-010]', ['n008', 'n009', 'n010']],
    ['n[1-010]', ['n1', 'n2', 'n3', 'n4', 'n5', 'n6', 'n7', 'n8', 'n9', 'n10']],
    ['n[098-101]', ['n098', 'n099', 'n100', 'n101']],
    ['n[7]', ['n7']],
    // Commas inside brackets list ranges, outside they separate hosts; so do blanks.
    ['gpu[1,3],cpu[2-3],login', ['gpu1', 'gpu3', 'cpu2', 'cpu3', 'login']],
    ['a b\tc', ['a', 'b', 'c']],
    [',a,,b, ,', ['a', 'b']],
    // Text between groups; with two groups the left one varies slowest.
    ['rack[1-2]-n[01-02]', ['rack1-n01', 'rack1-n02', 'rack2-n01', 'rack2-n02']],
    ['r[1-2]n[3,5]', ['r1n3', 'r1n5', 'r2n3', 'r2n5']],
    ['[1-2]x[7-8]', ['1x7', '1x8', '2x7', '2x8']],
    ['p[01-02].q[1]', ['p01.q1', 'p02.q1']],
    // Names are kept as written: dots, dashes, no number, a number in the middle.
    ['gpu-node01.cluster.example', ['gpu-node01.cluster.example']],
    ['node-1a', ['node-1a']],
    ['[3-4]', ['3', '4']],
    // Duplicates and order are kept, as hostlist_create keeps them.
    ['n[3,1,3]', ['n3', 'n1', 'n3']],
    ['login,n[1-2],login', ['login', 'n1', 'n2', 'login']],
    // Each item of a group keeps its own width.
    ['n[1,01]', ['n1', 'n01']],
    ['n[9,010]', ['n9', 'n010']],
    ['', []],
  ])('%s', (text, hosts) => {
    expect(expandHostlist(text)).toEqual(hosts);
  });

  it('three groups come out in libslurm order: middle slowest, then first, then last', () => {
    // _push_range_list recurses from the right-most group before the last.
    expect(expandHostlist('a[1-2]b[1-2]c[1-2]')).toEqual([
      'a1b1c1',
      'a1b1c2',
      'a2b1c1',
      'a2b1c2',
      'a1b2c1',
      'a1b2c2',
      'a2b2c1',
      'a2b2c2',
    ]);
  });

  it('numbers past 2^53 keep every digit', () => {
    expect(expandHostlist('n[9007199254740993-9007199254740994]')).toEqual([
      'n9007199254740993',
      'n9007199254740994',
    ]);
  });
});

describe('expandHostlist: malformed lists say what is wrong', () => {
  it.each([
    ['n[1-2', /'\[' at position 2 of 'n\[1-2' is never closed/],
    ['n1]', /'\]' without '\[' in 'n1\]' at position 3/],
    ['n[1[2]]', /nested '\['/],
    ['n[]', /an empty range in 'n\[\]'/],
    ['n[1,,2]', /an empty range in 'n\[1,,2\]'/],
    ['n[a-b]', /range 'a-b' in 'n\[a-b\]': expected N or LO-HI with digits only/],
    ['n[1-]', /range '1-'/],
    ['n[-1]', /range '-1'/],
    ['n[1--2]', /range '1--2'/],
    ['n[ 1-2]', /range ' 1-2'/],
    ['n[3-1]', /range '3-1' in 'n\[3-1\]' runs backwards/],
    ['n[1-2]-ib', /'-ib' after the last '\]' in 'n\[1-2\]-ib'/],
    ['n[0-65536]', /holds more than 65536 hosts/],
    ['r[0-70000]n[1]', /holds more than 65536 hosts/],
    ['a[1-300]b[1-300]', /expands to 90000 hosts, more than 65536/],
  ])('%s', (text, message) => {
    expect(() => expandHostlist(text)).toThrow(message);
  });

  it('takes exactly the largest range Slurm takes', () => {
    expect(expandHostlist('n[1-65536]')).toHaveLength(65_536);
  });
});

describe('properties', () => {
  it('a bracket group expands to its ranges in order, each padded to its low bound', () => {
    const range = fc
      .tuple(fc.nat({ max: 500 }), fc.nat({ max: 20 }), fc.nat({ max: 4 }))
      .map(([lo, span, width]) => ({ lo, hi: lo + span, width }));
    fc.assert(
      fc.property(
        fc.constantFrom('n', 'rack-', 'a.b'),
        fc.array(range, { minLength: 1, maxLength: 5 }),
        (prefix, ranges) => {
          const body = ranges
            .map((r) => {
              const lo = String(r.lo).padStart(r.width, '0');
              return r.lo === r.hi ? lo : `${lo}-${r.hi}`;
            })
            .join(',');
          const expected = ranges.flatMap((r) =>
            Array.from(
              { length: r.hi - r.lo + 1 },
              (_, i) => `${prefix}${String(r.lo + i).padStart(r.width, '0')}`,
            ),
          );
          expect(expandHostlist(`${prefix}[${body}]`)).toEqual(expected);
        },
      ),
    );
  });
});
