/**
 * RDMA devices laid out as the kernel shows them, for hosts this machine
 * cannot show for real (it has no RDMA hardware). Sources of the layout:
 * - Documentation/ABI/stable/sysfs-class-infiniband: class/infiniband/DEV/
 *   ports/N/{state,phys_state,link_layer,rate,gids/I}, ports/N/gid_attrs/
 *   {types,ndevs}/I, class/infiniband_verbs/uverbsN/ibdev and abi_version;
 * - drivers/infiniband/core/sysfs.c for the exact texts: state_show "%d: %s"
 *   ("4: ACTIVE"), phys_state_show "%u: %s" ("5: LinkUp"), link_layer_show
 *   "InfiniBand" | "Ethernet" | "Unknown", rate_show "%d%s Gb/sec (%dX%s)",
 *   show_port_gid "%pI6" with a zero GID for an empty slot, and the gid_attrs
 *   reads of an empty slot (and ndevs of a GID without netdev) failing with
 *   EINVAL; setup_port/setup_gid_attrs make gid_tbl_len files of each;
 * - the device model (drivers/infiniband/core/device.c): DEV and uverbsN are
 *   children of the PCI function, class/infiniband/DEV links to
 *   ../../devices/pci0000:00/PCI/infiniband/DEV, DEV/device links back to the
 *   PCI function, whose net/ lists its netdevs;
 * - the GIDs RoCE ports carry (drivers/infiniband/core/roce_gid_mgmt.c): the
 *   default GID fe80::EUI-64 of the netdev's MAC, then one per address of the
 *   netdev (IPv4 mapped as ::ffff:a.b.c.d), each once as "IB/RoCE v1" and
 *   once as "RoCE v2"; an InfiniBand port's GID 0 is fe80::port GUID;
 * - EFA (drivers/infiniband/hw/efa/efa_verbs.c): efa_port_link_layer returns
 *   IB_LINK_LAYER_UNSPECIFIED (sysfs "Unknown"), efa_query_port reports
 *   ACTIVE, LinkUp, 4X EDR and a one-slot GID table; the EFA function has
 *   no netdev of its own (the ENA NIC is another PCI function).
 * An attribute whose show() fails is a directory here: reading it fails, as
 * on a real host (tmpfs cannot return EINVAL).
 */
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export interface FakeGid {
  index: number;
  /** %pI6 text. */
  gid: string;
  type: 'IB/RoCE v1' | 'RoCE v2';
  netdev: string | null;
}

export interface FakePort {
  port: number;
  state: string;
  physState: string;
  linkLayer: 'InfiniBand' | 'Ethernet' | 'Unknown';
  rate: string;
  gidTableLength: number;
  gids: FakeGid[];
}

export interface FakeHca {
  name: string;
  /** The PCI function, e.g. 0000:3b:00.0. */
  pci: string;
  verbs: string;
  /** Netdevs of the PCI function: links to devices/virtual/net/NAME (the veths of the test). */
  netdevs: string[];
  ports: FakePort[];
  /** The PCI function's driver (its `driver` link names bus/pci/drivers/NAME); none when absent. */
  driver?: string;
}

/** %pI6 of eight 16-bit words. */
function pI6(words: readonly number[]): string {
  return words.map((word) => word.toString(16).padStart(4, '0')).join(':');
}

/** fe80::EUI-64 of a MAC (RFC 4291 appendix A: flip the U/L bit, insert ff:fe). */
export function linkLocalGid(mac: string): string {
  const bytes = mac.split(':').map((byte) => Number.parseInt(byte, 16));
  const [b0 = 0, b1 = 0, b2 = 0, b3 = 0, b4 = 0, b5 = 0] = bytes;
  return pI6([
    0xfe80,
    0,
    0,
    0,
    ((b0 ^ 2) << 8) | b1,
    (b2 << 8) | 0xff,
    0xfe00 | b3,
    (b4 << 8) | b5,
  ]);
}

/** The GID of an interface address: IPv4 mapped, IPv6 as is. */
export function addressGid(address: string): string {
  if (address.includes('.')) {
    const [a = 0, b = 0, c = 0, d = 0] = address.split('.').map(Number);
    return pI6([0, 0, 0, 0, 0, 0xffff, (a << 8) | b, (c << 8) | d]);
  }
  const [head = '', tail = ''] = address.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === '' ? [] : tail.split(':');
  const words = [...left, ...Array(8 - left.length - right.length).fill('0'), ...right];
  return pI6(words.map((word) => Number.parseInt(word, 16)));
}

/** An mlx5 port in InfiniBand mode, HDR (ConnectX-6): GID 0 from the port GUID. */
export function mlx5InfiniBand(
  name: string,
  pci: string,
  verbs: string,
  netdev: string,
  guid: string,
  state: 'ACTIVE' | 'DOWN' = 'ACTIVE',
): FakeHca {
  return {
    name,
    pci,
    verbs,
    netdevs: [netdev],
    ports: [
      {
        port: 1,
        state: state === 'ACTIVE' ? '4: ACTIVE' : '1: DOWN',
        physState: state === 'ACTIVE' ? '5: LinkUp' : '2: Polling',
        linkLayer: 'InfiniBand',
        rate: state === 'ACTIVE' ? '200 Gb/sec (4X HDR)' : '10 Gb/sec (4X SDR)',
        gidTableLength: 128,
        gids: [{ index: 0, gid: `fe80:0000:0000:0000:${guid}`, type: 'IB/RoCE v1', netdev: null }],
      },
    ],
  };
}

/** An mlx5 port in Ethernet mode (RoCE), EDR rate, over `netdev` with that MAC and those addresses. */
export function mlx5Roce(
  name: string,
  pci: string,
  verbs: string,
  netdev: string,
  mac: string,
  addresses: readonly string[],
): FakeHca {
  const gids = [linkLocalGid(mac), ...addresses.map(addressGid)].flatMap((gid, i): FakeGid[] => [
    { index: 2 * i, gid, type: 'IB/RoCE v1', netdev },
    { index: 2 * i + 1, gid, type: 'RoCE v2', netdev },
  ]);
  return {
    name,
    pci,
    verbs,
    netdevs: [netdev],
    ports: [
      {
        port: 1,
        state: '4: ACTIVE',
        physState: '5: LinkUp',
        linkLayer: 'Ethernet',
        rate: '100 Gb/sec (4X EDR)',
        gidTableLength: 255,
        gids,
      },
    ],
  };
}

/** An AWS EFA device: link layer Unknown, no netdev. */
export function efa(name: string, pci: string, verbs: string, gid: string): FakeHca {
  return {
    name,
    pci,
    verbs,
    driver: 'efa',
    netdevs: [],
    ports: [
      {
        port: 1,
        state: '4: ACTIVE',
        physState: '5: LinkUp',
        linkLayer: 'Unknown',
        rate: '100 Gb/sec (4X EDR)',
        gidTableLength: 1,
        gids: [{ index: 0, gid, type: 'IB/RoCE v1', netdev: null }],
      },
    ],
  };
}

/**
 * Writes root/class/{infiniband,infiniband_verbs} and
 * root/devices/pci0000:00/PCI/..., to be copied over /sys/class and
 * /sys/devices/pci0000:00 (or read as a sysRoot of its own).
 */
export function layOutRdma(root: string, hcas: readonly FakeHca[]): void {
  const file = (path: string, text: string) => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), `${text}\n`);
  };
  const failing = (path: string) => mkdirSync(join(root, path), { recursive: true });
  const link = (path: string, target: string) => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    symlinkSync(target, join(root, path));
  };
  file('class/infiniband_verbs/abi_version', '6');
  for (const hca of hcas) {
    const pciDir = `devices/pci0000:00/${hca.pci}`;
    const dir = `${pciDir}/infiniband/${hca.name}`;
    link(`class/infiniband/${hca.name}`, `../../${dir}`);
    link(`${dir}/device`, `../../../${hca.pci}`);
    file(`${dir}/node_type`, '1: CA');
    mkdirSync(join(root, pciDir, 'net'), { recursive: true });
    if (hca.driver !== undefined)
      link(`${pciDir}/driver`, `../../../bus/pci/drivers/${hca.driver}`);
    for (const netdev of hca.netdevs)
      link(`${pciDir}/net/${netdev}`, `../../../virtual/net/${netdev}`);
    const verbsDir = `${pciDir}/infiniband_verbs/${hca.verbs}`;
    link(`class/infiniband_verbs/${hca.verbs}`, `../../${verbsDir}`);
    file(`${verbsDir}/ibdev`, hca.name);
    file(`${verbsDir}/abi_version`, '1');
    for (const port of hca.ports) {
      const portDir = `${dir}/ports/${port.port}`;
      file(`${portDir}/state`, port.state);
      file(`${portDir}/phys_state`, port.physState);
      file(`${portDir}/link_layer`, port.linkLayer);
      file(`${portDir}/rate`, port.rate);
      for (let index = 0; index < port.gidTableLength; index += 1) {
        const gid = port.gids.find((entry) => entry.index === index);
        file(`${portDir}/gids/${index}`, gid?.gid ?? pI6([0, 0, 0, 0, 0, 0, 0, 0]));
        if (gid === undefined) {
          failing(`${portDir}/gid_attrs/types/${index}`);
          failing(`${portDir}/gid_attrs/ndevs/${index}`);
          continue;
        }
        file(`${portDir}/gid_attrs/types/${index}`, gid.type);
        if (gid.netdev === null) failing(`${portDir}/gid_attrs/ndevs/${index}`);
        else file(`${portDir}/gid_attrs/ndevs/${index}`, gid.netdev);
      }
    }
  }
}

/** The MAC of the RoCE netdev eth2 on the host below, and its two addresses. */
export const ROCE_MAC = '02:00:c6:12:07:02';
export const ROCE_V4 = '198.18.7.2';
export const ROCE_V6 = '2001:db8:7::2';

/**
 * The RDMA host the reader's tests lay out, in a plain directory
 * (test/unit/host/rdma-devices.test.ts) and over a real /sys
 * (test/integration/rdma-transport.test.ts), so both read the same devices:
 * InfiniBand HDR ports on mlx5_0 and mlx5_1 (its port down), RoCE on mlx5_2
 * over eth2, mlx5_10 (after mlx5_2 in natural order; NCCL_IB_HCA=mlx5_1
 * takes it too, as a prefix) and an EFA device, on uverbs0 to uverbs4.
 */
export const RDMA_HOST: readonly FakeHca[] = [
  mlx5InfiniBand('mlx5_0', '0000:3b:00.0', 'uverbs0', 'ib0', 'ba59:9f03:000c:8d1a'),
  mlx5InfiniBand('mlx5_1', '0000:5e:00.0', 'uverbs1', 'ib1', 'ba59:9f03:000c:8d1b', 'DOWN'),
  mlx5Roce('mlx5_2', '0000:86:00.0', 'uverbs2', 'eth2', ROCE_MAC, [ROCE_V4, ROCE_V6]),
  mlx5InfiniBand('mlx5_10', '0000:af:00.0', 'uverbs3', 'ib10', 'ba59:9f03:000c:8d2a'),
  efa('efa_0', '0000:10:1d.0', 'uverbs4', 'fe80:0000:0000:0000:0408:06ff:fe2b:1c3d'),
];

/**
 * What the reader must make of mlx5_0's port on RDMA_HOST: "4: ACTIVE",
 * "5: LinkUp" and "200 Gb/sec (4X HDR)" parsed, 128 GID slots of which only
 * GID 0 (fe80::port GUID, no netdev) is set.
 */
export const MLX5_0_PORT = {
  port: 1,
  state: 'ACTIVE',
  physState: 'LinkUp',
  linkLayer: 'InfiniBand',
  rateGbps: 200,
  netdev: 'ib0',
  gidTableLength: 128,
  gids: [
    {
      index: 0,
      gid: 'fe80:0000:0000:0000:ba59:9f03:000c:8d1a',
      type: 'IB/RoCE v1',
      netdev: null,
    },
  ],
};
