/**
 * The GPU NICs a GPUDirect-TCPX/TCPXO plugin takes for its data (SPEC "RDMA
 * transport": on GCP the bootstrap is the host NIC, never a GPU NIC): the
 * interfaces its own list names (NCCL_GPUDIRECTTCPX_SOCKET_IFNAME,
 * NCCL_FASTRAK_IFNAME, read as NCCL reads NCCL_SOCKET_IFNAME: both plugins
 * carry NCCL's findInterfaces), else, on a host with several gVNICs (PCI
 * vendor 0x1ae0), every gVNIC but the plugin's control NIC (its CTRL_DEV
 * variable; TCPXO's default eth0; else the first gVNIC, GCP's nic0). No
 * strategy but `explicit` picks them (resolve/excludes.ts, kind `plugin`).
 */
import type { InterfaceFacts } from '../host/host-facts.js';
import { ncclHonoursIfname, ncclIfnameMatches, parseNcclIfname } from '../nccl/nccl-ifname.js';
import type { NetPluginSearch } from './find-net-plugin.js';

export const GVNIC_VENDOR = '0x1ae0';

export interface PluginNics {
  plugin: string;
  /** Its data NICs, in kernel order. */
  nics: string[];
  /** How they were told: its variable, or the gVNICs. */
  by: string;
  /** The control NIC, the host's own: where the bootstrap belongs. */
  ctrl: string | null;
}

export function pluginNics(
  search: NetPluginSearch,
  interfaces: readonly InterfaceFacts[],
  env: Readonly<Record<string, string | undefined>>,
): PluginNics | null {
  const kind = search.plugin?.kind;
  if (kind === undefined || kind.fabric !== 'gvnic') return null;
  const gvnics = interfaces.filter((iface) => iface.vendor === GVNIC_VENDOR);
  const ctrl =
    (kind.ctrlVariable === null ? undefined : env[kind.ctrlVariable]) ??
    kind.ctrlDefault ??
    gvnics[0]?.name ??
    null;
  const list = kind.ifnameVariable === null ? undefined : env[kind.ifnameVariable];
  if (list !== undefined && ncclHonoursIfname(list)) {
    const parsed = parseNcclIfname(list);
    return {
      plugin: kind.label,
      nics: interfaces
        .filter((iface) => iface.kind !== 'loopback' && ncclIfnameMatches(parsed, iface.name))
        .map((iface) => iface.name),
      by: `${kind.ifnameVariable}=${list}`,
      ctrl,
    };
  }
  return {
    plugin: kind.label,
    nics:
      gvnics.length < 2 ? [] : gvnics.map((iface) => iface.name).filter((name) => name !== ctrl),
    by: `the gVNICs (PCI vendor ${GVNIC_VENDOR}) but its control NIC`,
    ctrl,
  };
}
