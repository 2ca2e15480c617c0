/**
 * What NCCL's data goes over when a net plugin is in play (SPEC "RDMA
 * transport": net plugins). ncclNetInit tries the external plugins before
 * its own IB and Socket (src/plugin/net.cc, v2.27.3-1 to v2.30.7-1; the
 * one plugin slot before, src/net.cc v2.22.3-1), and takes the first that
 * initialises and, under NCCL_NET, bears that name (strcasecmp). So:
 * - aws-ofi-nccl on a host with EFA devices (driver efa) and their device
 *   files: transport `efa`; without EFA devices its EFA provider finds
 *   nothing, and NCCL goes on to IB and sockets;
 * - GPUDirect-TCPX/TCPXO, or a plugin no record knows: transport `plugin`;
 * - no plugin on a host with EFA devices: NCCL runs on sockets (its IB
 *   transport does not take EFA's link layer), at a fraction of the fabric.
 * With a plugin carrying the data, the socket interface nccl-run chooses
 * carries NCCL's bootstrap only.
 */
import type { RdmaDeviceFacts, RdmaFacts } from '../host/host-facts.js';
import type { NetPluginSearch } from './find-net-plugin.js';
import type { IbSettings } from './ib-settings.js';
import type { PluginNics } from './plugin-nics.js';
import type { TransportVerdict } from './transport-verdict.js';

export const BOOTSTRAP_ONLY = "the socket interface carries NCCL's bootstrap only";

/** AWS EFA: its driver is `efa` (snapshots before the driver was read: rdmapNsM/efa_N names). */
export function isEfaDevice(device: RdmaDeviceFacts): boolean {
  if (device.driver !== undefined) return device.driver === 'efa';
  return /^(rdmap\d+s\d+|efa_\d+)$/.test(device.name);
}

export function efaDevices(rdma: RdmaFacts): RdmaDeviceFacts[] {
  return rdma.devices.filter(isEfaDevice);
}

/** Why NCCL_NET keeps NCCL off the plugin, or null. */
export function netExcludesPlugin(search: NetPluginSearch, settings: IbSettings): string | null {
  const plugin = search.plugin;
  if (plugin === null || settings.net === null) return null;
  const net = settings.net.toLowerCase();
  const names = plugin.kind.ncclNames(plugin.version);
  if (names.some((name) => name.toLowerCase() === net)) return null;
  // A plugin whose name nccl-run does not know may be the one NCCL_NET names, unless it names NCCL's own.
  if (names.length === 0 && net !== 'ib' && net !== 'socket') return null;
  return `NCCL_NET=${settings.net} leaves ${plugin.kind.label} out`;
}

/** The verdict with the plugin in front of NCCL's own transports (ibVerdict: theirs). */
export function pluginVerdict(
  search: NetPluginSearch,
  rdma: RdmaFacts,
  settings: IbSettings,
  ibVerdict: TransportVerdict,
  nics: PluginNics | null = null,
): TransportVerdict {
  const plugin = search.plugin;
  const efa = efaDevices(rdma);
  if (plugin === null || netExcludesPlugin(search, settings) !== null) {
    if (efa.length > 0 && ibVerdict.kind === 'socket') {
      const why =
        plugin === null
          ? `no net plugin (${search.notFound})`
          : (netExcludesPlugin(search, settings) as string);
      const efaOnly = efa.length === rdma.devices.length;
      const words = `${efa.length} EFA device(s) (${names(efa)}), but ${why}`;
      return {
        ...ibVerdict,
        // On a host with other RDMA devices, their reason comes first.
        reason: efaOnly
          ? `${words}: NCCL runs on sockets at a fraction of the fabric's speed`
          : `${ibVerdict.reason}; ${words}`,
      };
    }
    return ibVerdict;
  }
  const where = `${plugin.path}, via ${plugin.via}`;
  const label = `${plugin.kind.label}${plugin.version === null ? '' : ` ${plugin.version}`} (${where})`;
  if (plugin.kind.fabric === 'efa') {
    if (efa.length === 0) {
      return {
        ...ibVerdict,
        reason: `${ibVerdict.reason} (${label} is found, but there is no EFA device for it here)`,
      };
    }
    const openable = efa.filter(
      (device) => device.verbs !== null && rdma.deviceFiles.includes(device.verbs),
    );
    if (openable.length === 0) {
      return {
        ...ibVerdict,
        kind: 'socket',
        reason: `${label} is found, but the EFA devices have no /dev/infiniband device file here (a container started without them): NCCL runs on sockets`,
      };
    }
    return {
      ...ibVerdict,
      kind: 'efa',
      reason: `${label} drives ${openable.length} EFA device(s) (${names(openable)}); ${BOOTSTRAP_ONLY}`,
      devices: ibVerdict.devices.map((port) =>
        openable.some((device) => device.name === port.name)
          ? { ...port, used: true, skipped: null }
          : port,
      ),
      ncclFails: false,
    };
  }
  return {
    ...ibVerdict,
    kind: 'plugin',
    reason:
      plugin.kind.fabric === null
        ? `${label}: another net plugin, which NCCL tries before IB and sockets; what it drives nccl-run cannot tell`
        : `${label} carries the data over ${gpuNicsText(nics)}; ${BOOTSTRAP_ONLY}${nics?.ctrl == null ? '' : ` (the host NIC, ${nics.ctrl})`}`,
    ncclFails: false,
  };
}

function gpuNicsText(nics: PluginNics | null): string {
  if (nics === null || nics.nics.length === 0) return 'its GPU NICs';
  return `the GPU NICs ${nics.nics.join(', ')} (${nics.by})`;
}

function names(devices: readonly RdmaDeviceFacts[]): string {
  return devices.map((device) => device.name).join(', ');
}
