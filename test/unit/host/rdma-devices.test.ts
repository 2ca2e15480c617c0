/**
 * readHostFactsFrom over RDMA devices laid out as the kernel lays them out
 * (test/lab/rdma-sysfs.ts cites the sources), in a plain directory: the
 * same reader the namespace test (test/integration/rdma-transport.test.ts)
 * runs over a real /sys, here without root.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HostFacts } from '../../../src/host/host-facts.js';
import { readHostFactsFrom } from '../../../src/host/read-host-facts.js';
import { layOutRdma, MLX5_0_PORT, RDMA_HOST, ROCE_MAC, ROCE_V4 } from '../../lab/rdma-sysfs.js';

let root: string;
let facts: HostFacts;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'ncr-rdma-'));
  layOutRdma(join(root, 'sys'), RDMA_HOST);
  // The netdevs' own directories (veths in the namespace test), with dev_port.
  for (const netdev of RDMA_HOST.flatMap((hca) => hca.netdevs)) {
    mkdirSync(join(root, 'sys/devices/virtual/net', netdev), { recursive: true });
    writeFileSync(join(root, 'sys/devices/virtual/net', netdev, 'dev_port'), '0\n');
  }
  // Device files of two devices only, and a link to nowhere, which stat() does not find.
  mkdirSync(join(root, 'dev/infiniband'), { recursive: true });
  for (const name of ['uverbs0', 'uverbs2', 'rdma_cm'])
    writeFileSync(join(root, 'dev/infiniband', name), '');
  symlinkSync(join(root, 'gone'), join(root, 'dev/infiniband/uverbs1'));
  facts = await readHostFactsFrom({
    sysRoot: join(root, 'sys'),
    procRoot: join(root, 'proc'),
    devRoot: join(root, 'dev'),
    ip: 'never',
    hostname: 'node01',
    osInterfaces: {
      eth2: [
        {
          address: ROCE_V4,
          netmask: '255.255.255.0',
          family: 'IPv4',
          mac: ROCE_MAC,
          internal: false,
          cidr: `${ROCE_V4}/24`,
        },
      ],
    },
  });
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('RDMA devices read from sysfs', () => {
  it('lists the devices in natural order with their uverbs device', () => {
    expect(facts.rdma?.devices.map((device) => `${device.name} ${device.verbs}`)).toEqual([
      'efa_0 uverbs4',
      'mlx5_0 uverbs0',
      'mlx5_1 uverbs1',
      'mlx5_2 uverbs2',
      'mlx5_10 uverbs3',
    ]);
  });

  it('reads an InfiniBand HDR port: state, physical state, link layer, rate, IPoIB netdev, GID 0', () => {
    expect(facts.rdma?.devices.find((device) => device.name === 'mlx5_0')?.ports).toEqual([
      MLX5_0_PORT,
    ]);
    expect(facts.rdma?.devices.find((device) => device.name === 'mlx5_1')?.ports[0]).toMatchObject({
      state: 'DOWN',
      physState: 'Polling',
      rateGbps: 10,
    });
  });

  it("reads a RoCE port's GID table: v1 and v2 of each address, empty slots left out", () => {
    const port = facts.rdma?.devices.find((device) => device.name === 'mlx5_2')?.ports[0];
    expect(port).toMatchObject({
      linkLayer: 'Ethernet',
      rateGbps: 100,
      netdev: 'eth2',
      gidTableLength: 255,
    });
    expect(port?.gids.map((gid) => `${gid.index} ${gid.gid} ${gid.type} ${gid.netdev}`)).toEqual([
      '0 fe80:0000:0000:0000:0000:c6ff:fe12:0702 IB/RoCE v1 eth2',
      '1 fe80:0000:0000:0000:0000:c6ff:fe12:0702 RoCE v2 eth2',
      '2 0000:0000:0000:0000:0000:ffff:c612:0702 IB/RoCE v1 eth2',
      '3 0000:0000:0000:0000:0000:ffff:c612:0702 RoCE v2 eth2',
      '4 2001:0db8:0007:0000:0000:0000:0000:0002 IB/RoCE v1 eth2',
      '5 2001:0db8:0007:0000:0000:0000:0000:0002 RoCE v2 eth2',
    ]);
  });

  it('reads an EFA port: link layer Unknown, no netdev', () => {
    expect(facts.rdma?.devices.find((device) => device.name === 'efa_0')?.ports[0]).toMatchObject({
      state: 'ACTIVE',
      linkLayer: 'Unknown',
      rateGbps: 100,
      netdev: null,
      gidTableLength: 1,
    });
  });

  it('lists the /dev/infiniband entries that exist', () => {
    expect(facts.rdma?.deviceFiles).toEqual(['rdma_cm', 'uverbs0', 'uverbs2']);
  });

  it('maps each netdev to its device and port for the interface facts', () => {
    expect(facts.interfaces.find((iface) => iface.name === 'eth2')?.rdma).toEqual({
      device: 'mlx5_2',
      port: 1,
      state: 'ACTIVE',
    });
  });
});
