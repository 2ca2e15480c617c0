/**
 * How the data plane is shown (SPEC "RDMA transport", "Outputs"): explain's
 * Transport section, its `transport` object in JSON, and the words of the
 * launch summary, which says "data plane: sockets (no /dev/infiniband in
 * this container)" where RDMA devices exist but NCCL cannot open them.
 */
import type { RdmaFacts } from '../host/host-facts.js';
import { columns } from '../resolve/interface-table.js';
import { shellQuote } from '../shell-words.js';
import type { Transport } from './assess-transport.js';
import type { NetPluginSearch } from './find-net-plugin.js';
import { portLabel, type TransportPort } from './transport-verdict.js';

const NCCL_FAILS = 'NCCL_NET=IB makes NCCL fail instead of falling back to sockets';

export function transportJson(transport: Transport) {
  const { kind, reason, devices, deviceFiles, ncclFails } = transport.verdict;
  return {
    kind,
    reason,
    devices,
    deviceFiles,
    ncclFails,
    netPlugin: { ...netPluginJson(transport.netPlugin), variables: transport.pluginVariables },
    required: transport.required,
    unmet: transport.unmet?.message ?? null,
  };
}

/** The plugin NCCL loads: its kind, file and how the loader found it, its name for NCCL_NET, its variables. */
function netPluginJson(search: NetPluginSearch) {
  const { plugin } = search;
  return {
    setting: search.setting,
    tries: search.entries.flatMap((entry) => entry.names),
    found:
      plugin === null
        ? null
        : {
            kind: plugin.kind.id,
            label: plugin.kind.label,
            version: plugin.version,
            path: plugin.path,
            realPath: plugin.realPath,
            via: plugin.via,
            ncclNet: plugin.kind.ncclNet(plugin.version),
          },
    notFound: search.notFound,
  };
}

/** "net plugin: aws-ofi-nccl 1.14.2, /opt/amazon/ofi-nccl/lib/libnccl-net.so (via ld.so.cache; NCCL_NET=Libfabric selects it)" */
function netPluginLine(search: NetPluginSearch, kept: Readonly<Record<string, string>>): string[] {
  const { plugin } = search;
  if (plugin === null) return [`  net plugin: none: ${search.notFound}`];
  const net = plugin.kind.ncclNet(plugin.version);
  const variables = Object.entries(kept).map(([name, value]) => `${name}=${value}`);
  return [
    `  net plugin: ${plugin.kind.label}${plugin.version === null ? '' : ` ${plugin.version}`}, ${plugin.path} (via ${plugin.via}${net === null ? '' : `; NCCL_NET=${shellQuote(net)} selects it`})`,
    ...(variables.length > 0 ? [`  its variables (kept): ${variables.join(' ')}`] : []),
  ];
}

export function transportLines(transport: Transport, rdma: RdmaFacts | undefined): string[] {
  const { verdict } = transport;
  const fails = verdict.ncclFails ? `; ${NCCL_FAILS}` : '';
  const lines = [`Transport  ${verdict.kind}: ${verdict.reason}${fails}`];
  if (verdict.devices.length > 0) {
    lines.push(
      ...columns([
        ['DEVICE', 'PORT', 'STATE', 'PHYS', 'LINK', 'RATE', 'NETDEV', 'GID', 'NCCL'],
        ...verdict.devices.map((port) => [
          port.name,
          String(port.port),
          port.state ?? '-',
          port.physState ?? '-',
          port.linkLayer ?? '-',
          port.rateGbps === null ? '-' : `${port.rateGbps}G`,
          port.netdev ?? '-',
          gidText(port),
          port.used ? 'uses' : `skips: ${port.skipped}`,
        ]),
      ]),
    );
    const files = (rdma?.deviceFiles ?? []).filter((name) => name.startsWith('uverbs'));
    lines.push(
      files.length > 0
        ? `  device files: ${files.map((name) => `/dev/infiniband/${name}`).join(' ')}`
        : '  device files: none (no /dev/infiniband/uverbs*): NCCL cannot open the devices',
    );
  }
  lines.push(...netPluginLine(transport.netPlugin, transport.pluginVariables));
  if (transport.required !== null) {
    lines.push(
      `  required: ${transport.required}: ${transport.unmet === null ? 'met' : `NOT met (run and check exit ${transport.unmet.exitCode}): ${transport.unmet.message}`}`,
    );
  }
  return lines;
}

/** The launch summary's words, only where the host has RDMA devices or a plugin: "data plane: IB (mlx5_0:1, mlx5_1:1)". */
export function dataPlaneSummary(transport: Transport): string | null {
  const { verdict } = transport;
  const plugin = transport.netPlugin.plugin;
  if (verdict.kind === 'efa' || verdict.kind === 'plugin') {
    const label = plugin === null ? 'a net plugin' : plugin.kind.label;
    const efa = verdict.devices.filter((port) => port.used).map((port) => port.name);
    return `data plane: ${verdict.kind === 'efa' ? `EFA through ${label} (${efa.join(', ')})` : label}; the socket interface is for the bootstrap only`;
  }
  if (verdict.devices.length === 0) return null;
  const used = verdict.devices.filter((port) => port.used);
  if (verdict.ncclFails) return `data plane: none (${verdict.reason}; ${NCCL_FAILS})`;
  if (verdict.kind === 'socket') return `data plane: sockets (${verdict.reason})`;
  return `data plane: ${verdict.kind === 'ib' ? 'IB' : 'RoCE'} (${used.map(usedText).join(', ')})`;
}

function usedText(port: TransportPort): string {
  return port.linkLayer === 'Ethernet' && port.gidIndex !== null
    ? `${portLabel(port)} GID ${port.gidIndex}`
    : portLabel(port);
}

function gidText(port: TransportPort): string {
  if (port.gidIndex === null) return '-';
  if (port.gid === null) return `${port.gidIndex} (empty)`;
  return `${port.gidIndex} ${port.gid} ${port.gidType ?? ''}`.trimEnd();
}
