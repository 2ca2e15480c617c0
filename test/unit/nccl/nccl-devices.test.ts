/**
 * The socket transport's devices (src/nccl/nccl-pick.ts ncclDevices):
 * ncclFindInterfaces with maxIfs MAX_IFS, read at NVIDIA/nccl v2.22.3-1
 * (src/misc/socket.cc:101-160, :323-357, src/transport/net_socket.cc:44),
 * v2.28.9-1 (src/misc/socket.cc:355-388) and v2.29.7-1 (src/os/linux.cc:305-360,
 * src/misc/socket.cc:165-198). The first device is the bootstrap's pick
 * (held to the real NCCL by test/e2e/nccl-fuzz.test.ts); the rest follow the
 * source, on users' own hosts.
 */
import { describe, expect, it } from 'vitest';
import type { HostFacts } from '../../../src/host/host-facts.js';
import {
  MAX_SOCKET_DEVICES,
  type NcclBind,
  type NcclSettings,
  ncclDevices,
  ncclPick,
} from '../../../src/nccl/nccl-pick.js';
import { loadFacts } from '../../fixtures/facts/facts-fixtures.js';

const none: NcclSettings = { ifname: null, family: null, commId: null };
const names = (devices: NcclBind[]) => devices.map((d) => `${d.interface} ${d.address}`);

describe('ncclDevices', () => {
  // NVIDIA/nccl#177: NCCL_SOCKET_IFNAME=bond0 also matches bond0.2973 and bond0.2973.1.
  const bond = loadFacts('bond-vlan-nccl-177');

  it.each<[string, Partial<NcclSettings>, string[]]>([
    [
      'a prefix takes every interface it begins: IPv4 first, then the link-local-only VLAN',
      { ifname: 'bond0' },
      ['bond0 198.18.42.7', 'bond0.2973 198.19.106.189', 'bond0.2973.1 fe80::f816:3eff:fe5d:8ecb'],
    ],
    ['the exact name, one device', { ifname: '=bond0' }, ['bond0 198.18.42.7']],
    [
      'IPv6 only: each interface once, its first IPv6 address (link-local included)',
      { ifname: 'bond0', family: 'AF_INET6' },
      [
        'bond0 fe80::f816:3eff:feff:5ca1',
        'bond0.2973 fe80::f816:3eff:fe5d:8ecb',
        'bond0.2973.1 fe80::f816:3eff:fe5d:8ecb',
      ],
    ],
    [
      "NCCL's defaults: no ib, so everything but docker and lo",
      {},
      ['bond0 198.18.42.7', 'bond0.2973 198.19.106.189', 'bond0.2973.1 fe80::f816:3eff:fe5d:8ecb'],
    ],
    // strlen(env) > 1: a one-character value is NCCL's defaults.
    ['a one-character value is ignored', { ifname: 'b' }, names(ncclDevices(bond, none, '2.28+'))],
  ])('%s', (_, settings, expected) => {
    expect(names(ncclDevices(bond, { ...none, ...settings }, '2.28+'))).toEqual(expected);
  });

  it.each(['2.18-2.27', '2.28+'])('the first device is the bootstrap pick (%s)', (rules) => {
    for (const ifname of [null, 'bond0', '^bond0.2973', 'b', '=bond0.2973.1', 'eth']) {
      for (const family of [null, 'AF_INET6']) {
        const settings = { ...none, ifname, family };
        expect(ncclDevices(bond, settings, rules)[0] ?? null).toEqual(
          ncclPick(bond, settings, rules),
        );
      }
    }
  });

  it('stops at MAX_IFS (16) devices', () => {
    const many: HostFacts = {
      ...bond,
      interfaces: Array.from({ length: 20 }, (_, i) => ({
        ...(bond.interfaces[1] as HostFacts['interfaces'][number]),
        name: `eth${i}`,
        addresses: [
          {
            address: `198.18.${i}.5`,
            family: 'ipv4' as const,
            prefixLength: 24,
            scope: 'global' as const,
          },
        ],
      })),
    };
    const devices = ncclDevices(many, none, '2.28+');
    expect(devices).toHaveLength(MAX_SOCKET_DEVICES);
    expect(devices.at(-1)?.interface).toBe('eth15');
  });

  // v2.22.3-1 src/misc/socket.cc:340-349: after ib and before the other defaults, the one
  // interface whose subnet holds NCCL_COMM_ID's address (ncclFindInterfaceMatchSubnet stops at one).
  it("NCCL_COMM_ID's subnet, one device, before the other defaults", () => {
    const settings = { ...none, commId: '198.19.7.7:29600' };
    expect(names(ncclDevices(bond, settings, '2.28+', '198.19.7.7'))).toEqual([
      'bond0.2973 198.19.106.189',
    ]);
    // A value NCCL honours wins over the COMM_ID step.
    expect(
      names(ncclDevices(bond, { ...settings, ifname: '=bond0' }, '2.28+', '198.19.7.7')),
    ).toEqual(['bond0 198.18.42.7']);
  });

  it('2.28+ skip interfaces without IFF_RUNNING; 2.18-2.27 list them', () => {
    const down: HostFacts = {
      ...bond,
      interfaces: bond.interfaces.map((iface) =>
        iface.name === 'bond0.2973' ? { ...iface, operstate: 'down', carrier: false } : iface,
      ),
    };
    expect(names(ncclDevices(down, { ...none, ifname: 'bond0' }, '2.28+'))).not.toContain(
      'bond0.2973 198.19.106.189',
    );
    expect(names(ncclDevices(down, { ...none, ifname: 'bond0' }, '2.18-2.27'))).toContain(
      'bond0.2973 198.19.106.189',
    );
  });
});
