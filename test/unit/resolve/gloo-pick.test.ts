/**
 * What Gloo binds with nothing set by nccl-run (src/resolve/gloo-pick.ts):
 * the user's GLOO_SOCKET_IFNAME, else the first address of the hostname that
 * this host can bind, else 127.0.0.1.
 */
import { describe, expect, it } from 'vitest';
import type { NcclBind } from '../../../src/nccl/nccl-pick.js';
import { glooPick } from '../../../src/resolve/gloo-pick.js';
import { type FixtureName, loadFacts } from '../../fixtures/facts/facts-fixtures.js';

const bind = (iface: string, address: string): NcclBind => ({ interface: iface, address });

describe('glooPick', () => {
  it.each<[string, FixtureName, string | null, string[], NcclBind | null]>([
    [
      'the hostname on the management network',
      'lab-mgmt-first',
      null,
      ['198.18.100.5'],
      bind('eth0', '198.18.100.5'),
    ],
    // Debian's /etc/hosts: 127.0.1.1 is in lo's 127.0.0.0/8, which bind(2) accepts.
    ["Debian's 127.0.1.1", 'lab-mgmt-first', null, ['127.0.1.1'], bind('lo', '127.0.1.1')],
    [
      'the first address this host holds',
      'lab-mgmt-first',
      null,
      ['198.19.9.9', '198.18.2.5'],
      bind('eth1', '198.18.2.5'),
    ],
    [
      // The kernel keeps the address's local route while the link is down; torch 2.6's Gloo binds it (the fuzz).
      'a down NIC keeps its IPv4 address, which bind(2) accepts: Gloo binds it',
      'lab-down-nic',
      null,
      ['198.18.100.5'],
      bind('eth0', '198.18.100.5'),
    ],
    [
      'a hostname that does not resolve: loopback',
      'lab-mgmt-first',
      null,
      [],
      bind('lo', '127.0.0.1'),
    ],
    [
      'GLOO_SOCKET_IFNAME: its first IPv4 address',
      'lab-dual-stack',
      'eth1',
      ['198.18.100.5'],
      bind('eth1', '198.18.6.5'),
    ],
    [
      'several names: the first device',
      'lab-mgmt-first',
      'eth1,eth0',
      [],
      bind('eth1', '198.18.2.5'),
    ],
    [
      'an IPv6-only NIC: its first address',
      'lab-ipv6-only-nic',
      'eth1',
      [],
      bind('eth1', '2001:db8:7::5'),
    ],
    ['a name this host lacks: Gloo fails', 'lab-mgmt-first', 'ens9', [], null],
    [
      'an empty piece: torch refuses it (makeTCPDevice), Gloo makes no device',
      'lab-mgmt-first',
      ',eth1',
      ['198.18.100.5'],
      null,
    ],
    ['an empty piece after a name: refused too', 'lab-mgmt-first', 'eth1,,eth0', [], null],
    [
      'a trailing comma: std::getline drops it',
      'lab-mgmt-first',
      'eth1,',
      [],
      bind('eth1', '198.18.2.5'),
    ],
  ])('%s', (_, fixture, ifname, hostname, expected) => {
    expect(glooPick(loadFacts(fixture), ifname, hostname)).toEqual(expected);
  });
});
