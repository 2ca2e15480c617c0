/**
 * SPEC "Warnings" about what NCCL itself will do with the job's variables
 * (its pick, modelled by nccl/nccl-pick.ts): a kept NCCL_SOCKET_IFNAME
 * under which NCCL binds an interface that does not reach the master;
 * NCCL_COMM_ID, which moves NCCL's bootstrap; and an interface whose first
 * address, the one NCCL binds, is not the one on the master's network.
 */

import type { Family, HostFacts } from '../host/host-facts.js';
import { familyOf, isLinkLocalAddress, prefixContains, sameAddress } from '../host/ip-address.js';
import { isUp } from '../host/link-state.js';
import type { NcclBind, NcclSettings } from '../nccl/nccl-pick.js';
import { type Origin, whereSet } from '../origin.js';
import { familyLabel, networkOf } from '../resolve/ip-prefix.js';
import type { Reach } from '../resolve/reach-master.js';

export interface NcclPickFacts {
  facts: HostFacts;
  /** NCCL's settings in the job's environment and NCCL's files. */
  settings: NcclSettings;
  /** NCCL's pick under them. */
  pick: NcclBind | null;
  /** The interface that reaches the master (reach-master.ts), if any. */
  reach: Reach | null;
  /** The decision's interface: what Gloo and TensorPipe use; null where nothing was chosen. */
  chosen: string | null;
  /** Whether NCCL_SOCKET_IFNAME is the user's, kept; and where it came from. */
  keptIfname: { value: string; from: Origin } | null;
  commIdAddress: string | null;
  /** The NCCL version, where it inverts NCCL_COMM_ID's IPv4 subnet test (releases.ts); else null. */
  commIdInverted?: string | null;
  masterAddresses: readonly string[];
}

/** The warnings about the user's own NCCL settings: NCCL_COMM_ID, then a kept NCCL_SOCKET_IFNAME. */
export function ncclSettingWarnings(input: NcclPickFacts): string[] {
  const { pick, reach, keptIfname, settings } = input;
  if (settings.commId !== null) {
    const where = pick === null ? 'no interface here, so NCCL will fail' : describe(input, pick);
    const meets = input.commIdAddress ?? `'${settings.commId}', which does not resolve`;
    const inverted =
      input.commIdInverted != null &&
      input.commIdAddress !== null &&
      familyOf(input.commIdAddress) === 'ipv4';
    const listens = inverted
      ? `listens on the first IPv4 address whose network does NOT hold that address (NCCL ${input.commIdInverted} inverts this test, NVIDIA/nccl PR #2047, fixed in 2.30.3)`
      : 'listens on the first interface whose network holds that address';
    return [
      `NCCL_COMM_ID=${settings.commId} is set: NCCL's bootstrap meets at ${meets} instead of the id torch hands it, and ${listens}, ignoring NCCL_SOCKET_IFNAME${settings.ifname === null ? '' : ` ('${settings.ifname}')`}: ${where}; unset NCCL_COMM_ID unless that is meant${inverted ? ', or run NCCL 2.30.3 or later' : ''}`,
    ];
  }
  if (keptIfname === null || pick === null) return [];
  const yours = `NCCL_SOCKET_IFNAME='${keptIfname.value}' (yours, kept, from ${whereSet(keptIfname.from)}): NCCL binds ${describe(input, pick)}`;
  if (reach !== null && reach.interface !== pick.interface) {
    return [
      `${yours}, which does not reach the master ${input.masterAddresses.join(', ')}; ${reach.interface} does (${reach.reason}); set NCCL_SOCKET_IFNAME==${reach.interface}, or --force replaces it`,
    ];
  }
  // --iface chose for Gloo and TensorPipe; a kept list that NCCL reads elsewhere splits the job.
  if (input.chosen !== null && pick.interface !== input.chosen) {
    return [
      `${yours}, but Gloo and TensorPipe use ${input.chosen}: the job would talk over two interfaces; set NCCL_SOCKET_IFNAME==${input.chosen}, or --force replaces it`,
    ];
  }
  return [];
}

/**
 * NCCL binds the first address of the family on its interface (nccl-pick.ts);
 * when another address of that interface is the one on the master's network,
 * peers see, and must route back to, the first.
 */
export function bindAddressWarning(
  facts: HostFacts,
  pick: NcclBind | null,
  masterAddresses: readonly string[],
): string | null {
  const family = pick === null ? null : familyOf(pick.address);
  const iface = facts.interfaces.find((candidate) => candidate.name === pick?.interface);
  if (pick === null || family === null || iface === undefined) return null;
  const masters = masterAddresses.filter((address) => familyOf(address) === family);
  const onMasterNet = (address: string, prefixLength: number) =>
    masters.some((master) => prefixContains(address, prefixLength, master));
  const bound = iface.addresses.find((a) => sameAddress(a.address, pick.address));
  if (bound !== undefined && onMasterNet(bound.address, bound.prefixLength)) return null;
  const better = iface.addresses.find(
    (a) => a.family === family && a.scope === 'global' && onMasterNet(a.address, a.prefixLength),
  );
  if (better === undefined) return null;
  const network = `${networkOf(better.address, better.prefixLength)}/${better.prefixLength}`;
  return `NCCL binds ${pick.address} on ${iface.name}, its first ${familyLabel(family)} address, not ${better.address} on the master's network ${network}: peers will reach this node at ${pick.address}, which needs a route back; make ${better.address} ${iface.name}'s first ${familyLabel(family)} address (${orderRule(family)})`;
}

function orderRule(family: Family): string {
  return family === 'ipv4'
    ? "'ip addr' lists them in NCCL's order"
    : 'IPv6 addresses of one scope are listed newest first: add it last';
}

function describe(input: NcclPickFacts, pick: NcclBind): string {
  const iface = input.facts.interfaces.find((candidate) => candidate.name === pick.interface);
  const notes: string[] = [];
  if (isLinkLocalAddress(pick.address)) notes.push('link-local: no peer can reach it');
  if (iface !== undefined && !isUp(iface)) notes.push(`${iface.name} is down: NCCL cannot bind it`);
  return `${pick.interface} ${pick.address}${notes.length > 0 ? ` (${notes.join('; ')})` : ''}`;
}
