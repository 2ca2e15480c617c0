/**
 * The net plugins nccl-run knows, one record each: how a found library is
 * recognised, the name it registers with NCCL (what NCCL_NET must say to
 * make NCCL use it or fail), the fabric it drives, and the variables it
 * reads. A newcomer adds a plugin here and nowhere else; a library no
 * record recognises is reported as "another net plugin".
 *
 * Read at the source (never a real binary: none runs here):
 * - aws-ofi-nccl (aws/aws-ofi-nccl): installs libnccl-net-ofi.so and, unless
 *   --disable-nccl-net-library, libnccl-net.so (src/Makefile.am, v1.14.0 to
 *   v1.21.1), NGC images libnccl-net-aws-ofi.so; the Debian package
 *   `libnccl-ofi` puts them in /opt/amazon/ofi-nccl/lib with an ld.so.conf.d
 *   entry (contrib/debian-template), NGC ones in /opt/amazon/aws-ofi-nccl.
 *   Its name is "AWS Libfabric" to v1.12.1-aws, "Libfabric" from
 *   v1.13.0-aws, which also answers NCCL_NET="AWS Libfabric" or "OFI"
 *   (nvidia_plugin_name_fixup, src/nccl_ofi_interface_nvidia.cpp): so
 *   "AWS Libfabric" selects every version. Its version is read from
 *   dpkg's status file (package libnccl-ofi*), where a package installed it.
 * - GPUDirect-TCPX (google/nccl-plugin-gpudirecttcpx, 4b8ea7f): libnccl-net.so,
 *   name "GPUDirectTCPX_v7" (src/nccl_plugin.cc); its data NICs from
 *   NCCL_GPUDIRECTTCPX_SOCKET_IFNAME, its control NIC from
 *   NCCL_GPUDIRECTTCPX_CTRL_DEV (src/adapter/nccl/param.h prefix,
 *   src/misc/socket_utils.cc, src/connect.cc). GKE mounts it under a
 *   folder named tcpx.
 * - GPUDirect-TCPXO / FasTrak (google/nccl-plugin-gpudirect-tcpxo, 04815d1):
 *   libnccl-net.so, name "FasTrak" (fastrak_plugin.cc); NCCL_FASTRAK_IFNAME
 *   (data NICs) and NCCL_FASTRAK_CTRL_DEV (control NIC, eth0 when unset,
 *   common.cc initializeNetIfs); its installer copies it to
 *   /var/lib/tcpxo/lib64 and /var/lib/fastrak/lib64, beside
 *   libnccl-net_internal.so when it installs its shim
 *   (tcpxo_scripts/container_entry.sh).
 */
import { readdirSync, readFileSync, realpathSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { attempt } from '../host/attempt.js';
import type { NetPluginKindId } from '../host/host-facts.js';
import { atLeast } from '../version-order.js';

/** The fabric a plugin drives: AWS EFA, or Google's GPU NICs (gVNIC). */
export type PluginFabric = 'efa' | 'gvnic' | null;

/** What a record sees of a found library: its path and real path, the files beside it. */
export interface PluginFile {
  path: string;
  realPath: string;
  neighbours: readonly string[];
  /** Where the file system is mounted ('' for this host). */
  root: string;
}

export interface NetPluginKind {
  id: NetPluginKindId;
  /** As explain names it. */
  label: string;
  fabric: PluginFabric;
  recognises: (file: PluginFile) => boolean;
  /** Its version where its files say it; null otherwise. */
  version: (file: PluginFile) => string | null;
  /** The NCCL_NET value that selects it (NCCL fails instead of falling back when it cannot). */
  ncclNet: (version: string | null) => string | null;
  /** Every NCCL_NET value it answers to (strcasecmp), by its version (null: unknown); empty when unknown. */
  ncclNames: (version: string | null) => readonly string[];
  /** Its data NICs' variable, an NCCL_SOCKET_IFNAME-style list. */
  ifnameVariable: string | null;
  /** Its control NIC's variable, and the interface it takes when unset. */
  ctrlVariable: string | null;
  ctrlDefault: string | null;
  /** Every variable of its own that explain reports. */
  variables: readonly string[];
}

const inFolderNamed = (file: PluginFile, names: readonly string[]) =>
  [file.path, file.realPath].some((path) => path.split('/').some((part) => names.includes(part)));

export const NET_PLUGIN_KINDS: readonly NetPluginKind[] = [
  {
    id: 'aws-ofi-nccl',
    label: 'aws-ofi-nccl',
    fabric: 'efa',
    recognises: (file) =>
      ['libnccl-net-ofi.so', 'libnccl-net-aws-ofi.so'].some(
        (name) => basename(file.realPath) === name || file.neighbours.includes(name),
      ) || inFolderNamed(file, ['ofi-nccl', 'aws-ofi-nccl']),
    version: (file) => dpkgVersion(file.root, /^libnccl-ofi/),
    ncclNet: (version) =>
      version !== null && atLeast(version, '1.13.0') ? 'Libfabric' : 'AWS Libfabric',
    ncclNames: (version) =>
      version !== null && !atLeast(version, '1.13.0')
        ? ['AWS Libfabric']
        : ['Libfabric', 'AWS Libfabric', 'OFI'],
    ifnameVariable: null,
    ctrlVariable: null,
    ctrlDefault: null,
    variables: ['FI_PROVIDER', 'FI_EFA_USE_DEVICE_RDMA', 'OFI_NCCL_PROTOCOL'],
  },
  {
    id: 'tcpxo',
    label: 'GPUDirect-TCPXO (FasTrak)',
    fabric: 'gvnic',
    recognises: (file) =>
      file.neighbours.includes('libnccl-net_internal.so') ||
      inFolderNamed(file, ['tcpxo', 'fastrak']),
    version: () => null,
    ncclNet: () => 'FasTrak',
    ncclNames: () => ['FasTrak'],
    ifnameVariable: 'NCCL_FASTRAK_IFNAME',
    ctrlVariable: 'NCCL_FASTRAK_CTRL_DEV',
    ctrlDefault: 'eth0',
    variables: ['NCCL_FASTRAK_IFNAME', 'NCCL_FASTRAK_CTRL_DEV', 'NCCL_FASTRAK_NUM_FLOWS'],
  },
  {
    id: 'gpudirect-tcpx',
    label: 'GPUDirect-TCPX',
    fabric: 'gvnic',
    recognises: (file) => inFolderNamed(file, ['tcpx']),
    version: () => null,
    ncclNet: () => 'GPUDirectTCPX_v7',
    ncclNames: () => ['GPUDirectTCPX_v7'],
    ifnameVariable: 'NCCL_GPUDIRECTTCPX_SOCKET_IFNAME',
    ctrlVariable: 'NCCL_GPUDIRECTTCPX_CTRL_DEV',
    ctrlDefault: null,
    variables: [
      'NCCL_GPUDIRECTTCPX_SOCKET_IFNAME',
      'NCCL_GPUDIRECTTCPX_CTRL_DEV',
      'NCCL_GPUDIRECTTCPX_UNIX_CLIENT_PREFIX',
    ],
  },
];

/** What nccl-run says of a plugin no record recognises. */
export const OTHER_PLUGIN: NetPluginKind = {
  id: 'other',
  label: 'another net plugin',
  fabric: null,
  recognises: () => true,
  version: () => null,
  ncclNet: () => null,
  ncclNames: () => [],
  ifnameVariable: null,
  ctrlVariable: null,
  ctrlDefault: null,
  variables: [],
};

/** The record that recognises the file at `path` (under root). */
export function recognisePlugin(
  path: string,
  root = '',
): { kind: NetPluginKind; version: string | null; realPath: string } {
  const real = attempt(() => realpathSync(join(root, path)));
  const realPath = real === undefined ? path : real.slice(root.length) || '/';
  const file: PluginFile = {
    path,
    realPath,
    neighbours: attempt(() => readdirSync(join(root, dirname(path)))) ?? [],
    root,
  };
  const kind = NET_PLUGIN_KINDS.find((entry) => entry.recognises(file)) ?? OTHER_PLUGIN;
  return { kind, version: kind.version(file), realPath };
}

/** The Version of the first installed package whose name matches, in dpkg's status file. */
function dpkgVersion(root: string, name: RegExp): string | null {
  const status = attempt(() => readFileSync(join(root, '/var/lib/dpkg/status'), 'utf8'));
  if (status === undefined) return null;
  for (const stanza of status.split(/\n\n+/)) {
    const pkg = /^Package: (\S+)$/m.exec(stanza)?.[1];
    if (pkg === undefined || !name.test(pkg)) continue;
    if (!/^Status: .* installed$/m.test(stanza)) continue;
    const version = /^Version: (?:\d+:)?(\d+\.\d+\.\d+)/m.exec(stanza)?.[1];
    if (version !== undefined) return version;
  }
  return null;
}
