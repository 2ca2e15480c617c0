/**
 * SPEC "NCCL's own pick": NCCL's socket transport runs its channels over
 * every device of its list (nccl/nccl-pick.ts ncclDevices), not only the
 * bootstrap's first. Where a kept NCCL_SOCKET_IFNAME, or NCCL's defaults,
 * give several, each device after the first that cannot carry the job is a
 * warning naming it, and the exact value that keeps only the good ones (a
 * prefix `bond0` also matches `bond0.2973`: `=bond0` does not). The first is
 * the bootstrap's pick, which ncclSettingWarnings already judges.
 *
 * Users met it: horovod/horovod#584 logs NCCL using lo:127.0.0.1, eth0 and
 * eth1's fe80 address as three socket devices, then "Call to connect
 * timeout"; NVIDIA/nccl#177 has bond0, bond0.2973 and a link-local-only
 * bond0.2973.1 all matched by NCCL_SOCKET_IFNAME=bond0.
 */
import type { HostFacts } from '../host/host-facts.js';
import { isLinkLocalAddress, isLoopbackAddress, prefixContains } from '../host/ip-address.js';
import type { NcclBind } from '../nccl/nccl-pick.js';
import { type Origin, whereSet } from '../origin.js';

export interface DataPlaneFacts {
  facts: HostFacts;
  /** The job's devices, in NCCL's index order. */
  devices: readonly NcclBind[];
  /** The interface that reaches the master (reach-master.ts); null where none does or there is no master. */
  reaches: string | null;
  masterAddresses: readonly string[];
  /** The kept NCCL_SOCKET_IFNAME behind the list; null: NCCL's defaults gave it. */
  keptIfname: { value: string; from: Origin } | null;
  /** A single-node job's devices need reach nothing but this host. */
  singleNode: boolean;
}

/** Why `device` cannot carry a multi-node job's channels; null where it can. */
export function deviceFault(input: DataPlaneFacts, device: NcclBind): string | null {
  const iface = input.facts.interfaces.find((candidate) => candidate.name === device.interface);
  if (iface?.kind === 'loopback' || isLoopbackAddress(device.address)) {
    return 'loopback: no other node can reach it';
  }
  if (isLinkLocalAddress(device.address)) return 'link-local only: no peer can reach it';
  if (iface?.kind === 'bridge') return "a bridge: its network is this host's own";
  if (device.interface === input.reaches) return null;
  const onMasterNetwork = (iface?.addresses ?? []).some((held) =>
    input.masterAddresses.some((master) => prefixContains(held.address, held.prefixLength, master)),
  );
  if (onMasterNetwork || input.masterAddresses.length === 0) return null;
  return `not on the master's network (${input.masterAddresses.join(', ')})`;
}

export function dataPlaneWarnings(input: DataPlaneFacts): string[] {
  const { devices } = input;
  if (devices.length < 2 || input.singleNode) return [];
  const faults = devices.map((device) => deviceFault(input, device));
  const good = devices.filter((_, index) => faults[index] === null).map((d) => d.interface);
  // The exact spelling of the good devices; where none is good, the interface that reaches the master.
  const keep = good.length > 0 ? good : input.reaches === null ? [] : [input.reaches];
  const fix =
    keep.length === 0
      ? 'name the interface that reaches the master with --iface'
      : `set NCCL_SOCKET_IFNAME==${keep.join(',')}${input.keptIfname === null ? '' : ', or --force replaces yours with the exact name nccl-run chose'}`;
  const under =
    input.keptIfname === null
      ? "NCCL's defaults"
      : `NCCL_SOCKET_IFNAME='${input.keptIfname.value}' (yours, kept, from ${whereSet(input.keptIfname.from)})`;
  const listed = devices.map((d, i) => `[${i}]${d.interface}`).join(' ');
  return devices.flatMap((device, index) => {
    const fault = faults[index];
    if (index === 0 || fault === null || fault === undefined) return [];
    return [
      `NCCL's socket transport runs the job's channels over every device ${under} gives (${listed}), and device [${index}] ${device.interface} ${device.address} cannot carry them (${fault}); ${fix}`,
    ];
  });
}
