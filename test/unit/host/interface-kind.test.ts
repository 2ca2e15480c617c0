import { describe, expect, it } from 'vitest';
import type { InterfaceKind } from '../../../src/host/host-facts.js';
import { interfaceKind, type KindSignals } from '../../../src/host/interface-kind.js';

/** A software Ethernet device with no markers at all (what a dummy or ifb looks like in sysfs). */
const bare: KindSignals = {
  arphrdType: 1,
  devtype: null,
  hasDevice: false,
  hasBonding: false,
  hasBondingSlave: false,
  hasBridge: false,
  hasTunFlags: false,
  hasLower: false,
  ridesOnOther: false,
  linkKind: null,
  slaveKind: null,
};

// Each row is the set of markers the kernel shows for that kind of link
// (checked on this machine's kernel for veth, bridge, macvlan, vxlan, tun/tap).
const cases: Array<[string, Partial<KindSignals>, InterfaceKind]> = [
  ['lo: ARPHRD_LOOPBACK', { arphrdType: 772 }, 'loopback'],
  ['a PCI or virtio NIC', { hasDevice: true }, 'physical'],
  ['an InfiniBand port (ARPHRD_INFINIBAND)', { arphrdType: 32, hasDevice: true }, 'infiniband'],
  ['an IPoIB child from ip -d', { arphrdType: 32, linkKind: 'ipoib' }, 'infiniband'],
  ['a bond (bonding/)', { hasBonding: true, devtype: 'bond' }, 'bond'],
  ['a team from ip -d', { linkKind: 'team' }, 'bond'],
  ['a bond member NIC (bonding_slave/)', { hasDevice: true, hasBondingSlave: true }, 'bond-member'],
  ['a team member, per ip -d', { hasDevice: true, slaveKind: 'team' }, 'bond-member'],
  [
    'a bridge port keeps its own kind',
    { ridesOnOther: true, linkKind: 'veth', slaveKind: 'bridge' },
    'veth',
  ],
  ['a bridge (bridge/, DEVTYPE=bridge)', { hasBridge: true, devtype: 'bridge' }, 'bridge'],
  ['a vlan (DEVTYPE=vlan)', { devtype: 'vlan', ridesOnOther: true, hasLower: true }, 'vlan'],
  ['a vxlan (DEVTYPE=vxlan)', { devtype: 'vxlan' }, 'tunnel'],
  [
    'a wireguard link (ARPHRD_NONE, DEVTYPE=wireguard)',
    { arphrdType: 65534, devtype: 'wireguard' },
    'tunnel',
  ],
  ['a tun (tun_flags, ARPHRD_NONE)', { arphrdType: 65534, hasTunFlags: true }, 'tunnel'],
  ['a tap (tun_flags, Ethernet)', { hasTunFlags: true }, 'tunnel'],
  ['an ipip tunnel (ARPHRD_TUNNEL)', { arphrdType: 768 }, 'tunnel'],
  ['a gre tunnel (ARPHRD_IPGRE)', { arphrdType: 778 }, 'tunnel'],
  ['a gretap from ip -d (Ethernet, no markers)', { linkKind: 'gretap' }, 'tunnel'],
  ['a veth, per ip -d', { ridesOnOther: true, linkKind: 'veth' }, 'veth'],
  ['a veth, sysfs only (iflink is its peer)', { ridesOnOther: true }, 'veth'],
  // Made with `ip link add eth0 index 7 netns A type veth peer name vb index 7
  // netns B` (kernel 6.18): iflink == ifindex, and nothing else in sysfs says veth.
  ['a veth whose peer has its ifindex, sysfs only', {}, 'other-virtual'],
  ['a veth whose peer has its ifindex, per ip -d', { linkKind: 'veth' }, 'veth'],
  ['a macvlan, sysfs only (lower_ link)', { ridesOnOther: true, hasLower: true }, 'macvlan'],
  ['a macvlan in a container, per ip -d', { ridesOnOther: true, linkKind: 'macvlan' }, 'macvlan'],
  ['a macvtap, per ip -d', { ridesOnOther: true, linkKind: 'macvtap' }, 'macvlan'],
  ['a dummy, per ip -d', { linkKind: 'dummy' }, 'other-virtual'],
  [
    'an ipvlan, per ip -d',
    { ridesOnOther: true, hasLower: true, linkKind: 'ipvlan' },
    'other-virtual',
  ],
  ['an ifb, sysfs only', {}, 'other-virtual'],
  ['nothing readable at all', { arphrdType: null }, 'other-virtual'],
];

describe('interfaceKind', () => {
  it.each(cases)('%s', (_name, signals, kind) => {
    expect(interfaceKind({ ...bare, ...signals })).toBe(kind);
  });
});
