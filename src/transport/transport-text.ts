/**
 * How the data plane is shown (SPEC "RDMA transport", "Outputs"): explain's
 * Transport section, its `transport` object in JSON, and the words of the
 * launch summary, which says "data plane: sockets (no /dev/infiniband in
 * this container)" where RDMA devices exist but NCCL cannot open them.
 */
import type { RdmaFacts } from '../host/host-facts.js';
import { columns } from '../resolve/interface-table.js';
import type { Transport } from './assess-transport.js';
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
    required: transport.required,
    unmet: transport.unmet?.message ?? null,
  };
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
  if (transport.required !== null) {
    lines.push(
      `  required: ${transport.required}: ${transport.unmet === null ? 'met' : `NOT met (run and check exit ${transport.unmet.exitCode}): ${transport.unmet.message}`}`,
    );
  }
  return lines;
}

/** The launch summary's words, only where the host has RDMA devices: "data plane: IB (mlx5_0:1, mlx5_1:1)". */
export function dataPlaneSummary(transport: Transport): string | null {
  const { verdict } = transport;
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
