/**
 * The model of NCCL's interface selection (src/nccl/nccl-pick.ts) over
 * facts snapshots. The lab-* fixtures are the NCCL oracle's hosts, and every
 * '2.18-2.27' expectation on them is what the real NCCL 2.22.3 printed there
 * (test/e2e/nccl-oracle.test.ts); the '2.28+' ones follow v2.28.3-1's source.
 */
import { describe, expect, it } from 'vitest';
import type { HostFacts } from '../../../src/host/host-facts.js';
import { ncclBehaviour } from '../../../src/nccl/behaviour.js';
import {
  commIdHost,
  type NcclBind,
  type NcclRules,
  type NcclSettings,
  ncclBindOn,
  ncclPick,
  ncclRules,
  ncclSettings,
} from '../../../src/nccl/nccl-pick.js';
import { type FixtureName, loadFacts } from '../../fixtures/facts/facts-fixtures.js';

const none: NcclSettings = { ifname: null, family: null, commId: null };
const bind = (iface: string, address: string): NcclBind => ({ interface: iface, address });
const only = (facts: HostFacts, ...names: string[]): HostFacts => ({
  ...facts,
  interfaces: facts.interfaces.filter((iface) => names.includes(iface.name)),
});

type Row = [string, FixtureName, Partial<NcclSettings>, NcclRules, NcclBind | null];

describe("ncclPick: NCCL's defaults (ib, then not docker/lo [/virbr], then docker, lo [, virbr])", () => {
  it.each<Row>([
    [
      'the management NIC, first in kernel order',
      'lab-mgmt-first',
      {},
      '2.18-2.27',
      bind('eth0', '198.18.100.5'),
    ],
    [
      'docker0 is skipped, a compose bridge is not',
      'lab-docker-bridges',
      {},
      '2.18-2.27',
      bind('br-5f3a9c1d', '203.0.113.65'),
    ],
    [
      '2.18-2.27 take virbr0',
      'lab-virbr-vpn-first',
      {},
      '2.18-2.27',
      bind('virbr0', '203.0.113.129'),
    ],
    // virbr is excluded, and tun0 (no process behind it) is not running.
    [
      '2.28+ skip virbr0 and the tun without carrier',
      'lab-virbr-vpn-first',
      {},
      '2.28+',
      bind('eth0', '198.18.4.5'),
    ],
    ['eth1 before eth10', 'lab-prefix-names', {}, '2.18-2.27', bind('eth1', '198.18.100.5')],
    [
      'an ib0 on an unrelated network wins',
      'lab-ib0-unrelated',
      {},
      '2.18-2.27',
      bind('ib0', '198.19.50.5'),
    ],
    [
      'the IB port that is up, under 2.28+',
      'infiniband-node',
      {},
      '2.28+',
      bind('ib0', '198.18.32.17'),
    ],
    [
      'every IPv4 address before any IPv6 one',
      'lab-dual-stack',
      {},
      '2.18-2.27',
      bind('eth0', '198.18.100.5'),
    ],
    [
      '2.18-2.27 take a down NIC that keeps its IPv4 address',
      'lab-down-nic',
      {},
      '2.18-2.27',
      bind('eth0', '198.18.100.5'),
    ],
    [
      '2.28+ take only running interfaces',
      'lab-down-nic',
      {},
      '2.28+',
      bind('eth1', '198.18.11.5'),
    ],
    [
      'AF_INET6: a link-local address is taken (and then fails to bind)',
      'lab-dual-stack',
      { family: 'AF_INET6' },
      '2.18-2.27',
      bind('eth0', 'fe80::40b1:e5ff:feb6:8a32'),
    ],
    [
      'AF_INET6 on the IPv6-only NIC layout: still the management NIC, link-local',
      'lab-ipv6-only-nic',
      { family: 'AF_INET6' },
      '2.28+',
      bind('eth0', 'fe80::bce4:e3ff:febc:5204'),
    ],
    [
      'any other NCCL_SOCKET_FAMILY is ignored',
      'lab-dual-stack',
      { family: 'inet6' },
      '2.28+',
      bind('eth0', '198.18.100.5'),
    ],
  ])('%s', (_, fixture, settings, rules, expected) => {
    expect(ncclPick(loadFacts(fixture), { ...none, ...settings }, rules)).toEqual(expected);
  });

  it('falls back to docker, then lo; 2.28+ try virbr last, after lo', () => {
    const bridges = loadFacts('lab-docker-bridges');
    expect(ncclPick(only(bridges, 'lo', 'docker0'), none, '2.28+')).toEqual(
      bind('docker0', '203.0.113.1'),
    );
    expect(ncclPick(only(bridges, 'lo'), none, '2.28+')).toEqual(bind('lo', '127.0.0.1'));
    const virbr = loadFacts('lab-virbr-vpn-first');
    expect(ncclPick(only(virbr, 'lo', 'virbr0'), none, '2.28+')).toEqual(bind('lo', '127.0.0.1'));
    expect(ncclPick(only(virbr, 'virbr0'), none, '2.28+')).toEqual(bind('virbr0', '203.0.113.129'));
  });

  it('finds nothing when only ::1 is left (NCCL skips it)', () => {
    expect(
      ncclPick(
        loadFacts('lab-single-node'),
        { ...none, ifname: '=lo', family: 'AF_INET6' },
        '2.28+',
      ),
    ).toBeNull();
  });
});

describe("ncclPick: the user's NCCL_SOCKET_IFNAME, each syntax", () => {
  it.each<Row>([
    [
      '^lo: docker0 is no exception',
      'lab-docker-bridges',
      { ifname: '^lo' },
      '2.18-2.27',
      bind('docker0', '203.0.113.1'),
    ],
    [
      '^docker,lo',
      'lab-docker-bridges',
      { ifname: '^docker,lo' },
      '2.18-2.27',
      bind('br-5f3a9c1d', '203.0.113.65'),
    ],
    [
      '^=docker0 leaves lo, first in kernel order',
      'lab-docker-bridges',
      { ifname: '^=docker0' },
      '2.18-2.27',
      bind('lo', '127.0.0.1'),
    ],
    [
      'a prefix takes eth1 and eth10: eth1 first',
      'lab-prefix-names',
      { ifname: 'eth1' },
      '2.18-2.27',
      bind('eth1', '198.18.100.5'),
    ],
    [
      '=eth1 is eth1 only',
      'lab-prefix-names',
      { ifname: '=eth1' },
      '2.18-2.27',
      bind('eth1', '198.18.100.5'),
    ],
    ['eth10', 'lab-prefix-names', { ifname: 'eth10' }, '2.18-2.27', bind('eth10', '198.18.10.5')],
    ['=^eth1 matches no name', 'lab-prefix-names', { ifname: '=^eth1' }, '2.18-2.27', null],
    [
      'one character is ignored: the defaults run',
      'lab-prefix-names',
      { ifname: 'e' },
      '2.18-2.27',
      bind('eth1', '198.18.100.5'),
    ],
    [
      "2.28+ skip a down NIC under the user's list too",
      'lab-down-nic',
      { ifname: 'eth' },
      '2.28+',
      bind('eth1', '198.18.11.5'),
    ],
    [
      "^docker,lo with AF_INET6: the management NIC's link-local address",
      'lab-dual-stack',
      { ifname: '^docker,lo', family: 'AF_INET6' },
      '2.18-2.27',
      bind('eth0', 'fe80::40b1:e5ff:feb6:8a32'),
    ],
    [
      "the first IPv4 address of a NIC, not the master's",
      'lab-multi-address',
      { ifname: '=eth1', family: 'AF_INET' },
      '2.18-2.27',
      bind('eth1', '198.18.9.5'),
    ],
    [
      'IPv6: newest first within a scope',
      'lab-multi-address',
      { ifname: '=eth1', family: 'AF_INET6' },
      '2.18-2.27',
      bind('eth1', '2001:db8:9::5'),
    ],
  ])('%s', (_, fixture, settings, rules, expected) => {
    expect(ncclPick(loadFacts(fixture), { ...none, ...settings }, rules)).toEqual(expected);
  });
});

describe('ncclPick: NCCL_COMM_ID moves the bootstrap to the subnet of its address', () => {
  const facts = loadFacts('lab-mgmt-first');
  it.each<[string, Partial<NcclSettings>, string | null, NcclBind | null]>([
    [
      'over a kept list',
      { commId: '198.18.100.1:29600', ifname: '=eth1' },
      '198.18.100.1',
      bind('eth0', '198.18.100.5'),
    ],
    ['on no local network: nothing', { commId: '198.19.9.9:29600' }, '198.19.9.9', null],
    ['that does not resolve: nothing', { commId: 'nowhere:29600' }, null, null],
  ])('%s', (_, settings, address, expected) => {
    expect(ncclPick(facts, { ...none, ...settings }, '2.18-2.27', address)).toEqual(expected);
  });
});

describe('ncclPick: NCCL 2.29.2-2.29.7 invert the IPv4 subnet test of NCCL_COMM_ID (PR #2047)', () => {
  // What the real 2.29.7 of the sid root binds on this host (test/e2e/nccl-oracle.test.ts).
  const facts = loadFacts('lab-mgmt-first');
  const commId = { ...none, commId: '198.18.100.1:29600' };
  it('takes the first IPv4 address whose network does not hold it: lo', () => {
    expect(ncclPick(facts, commId, '2.28+', '198.18.100.1', 'inverted')).toEqual(
      bind('lo', '127.0.0.1'),
    );
  });
  it('with the COMM_ID on loopback, the first other network: eth0', () => {
    expect(ncclPick(facts, commId, '2.28+', '127.0.0.1', 'inverted')).toEqual(
      bind('eth0', '198.18.100.5'),
    );
  });
  it('the releases around them test it right', () => {
    expect(ncclBehaviour('2.28.9').commIdSubnetMatch).toBe('holds');
    expect(ncclBehaviour('2.29.2').commIdSubnetMatch).toBe('inverted');
    expect(ncclBehaviour('2.29.7').commIdSubnetMatch).toBe('inverted');
    expect(ncclBehaviour('2.30.3').commIdSubnetMatch).toBe('holds');
    expect(ncclBehaviour(null).commIdSubnetMatch).toBe('holds');
  });
});

describe('commIdHost (ncclSocketGetAddrFromString)', () => {
  it.each<[string, string | null]>([
    ['198.18.2.1:29600', '198.18.2.1'],
    ['master-0:29600', 'master-0'],
    ['[2001:db8::7]:29600', '2001:db8::7'],
    ['[fe80::1%eth0]:29600', 'fe80::1%eth0'],
    // Without brackets an IPv6 address is cut at its first colon, as NCCL cuts it.
    ['2001:db8::7:29600', '2001'],
    ['[2001:db8::7', null],
    [':29600', null],
    ['x', null],
  ])('%j → %j', (value, host) => {
    expect(commIdHost(value)).toBe(host);
  });
});

describe('ncclBindOn: the address NCCL binds on the chosen interface', () => {
  it.each<
    [FixtureName, string, 'ipv4' | 'ipv6', { address: string; family: 'ipv4' | 'ipv6' } | null]
  >([
    ['lab-multi-address', 'eth1', 'ipv4', { address: '198.18.9.5', family: 'ipv4' }],
    ['lab-multi-address', 'eth1', 'ipv6', { address: '2001:db8:9::5', family: 'ipv6' }],
    // NCCL skips ::1: an IPv6 job on lo runs NCCL's sockets on IPv4.
    ['lab-single-node', 'lo', 'ipv6', { address: '127.0.0.1', family: 'ipv4' }],
    ['lab-single-node', 'lo', 'ipv4', { address: '127.0.0.1', family: 'ipv4' }],
    ['lab-ipv6-only-nic', 'eth1', 'ipv4', null],
  ])('%s %s %s', (fixture, name, family, expected) => {
    expect(ncclBindOn(loadFacts(fixture), name, family, '2.28+')).toEqual(expected);
  });
});

describe('ncclRules and ncclSettings', () => {
  it.each<[string | null, NcclRules]>([
    [null, '2.28+'],
    ['2.18.6', '2.18-2.27'],
    ['2.22.3', '2.18-2.27'],
    ['2.27.7', '2.18-2.27'],
    ['2.28.3', '2.28+'],
    ['2.30.7', '2.28+'],
    ['3.0.0', '2.28+'],
  ])('%j → %s', (version, rules) => {
    expect(ncclRules(version)).toBe(rules);
  });

  it('reads the three variables, unset as null', () => {
    expect(ncclSettings({ NCCL_SOCKET_IFNAME: '=eth1', NCCL_COMM_ID: 'h:1' })).toEqual({
      ifname: '=eth1',
      family: null,
      commId: 'h:1',
    });
  });
});
