/**
 * Checks of the GID each RoCE port will use (SPEC "RDMA transport"): a user's
 * NCCL_IB_GID_INDEX that points at an empty or missing slot, a link-local GID
 * or a RoCE v1 one, and NCCL's own choice when the port has no valid GID of
 * the wanted version and family (a netdev without an address). Such a GID
 * connects on one machine and fails between them ("NET/IB : Got completion
 * with error 12"). InfiniBand ports are not checked: NCCL 2.22 reads
 * NCCL_IB_GID_INDEX only for RoCE (net_ib.cc ncclIbGetGidIndex).
 */

import type { RdmaFacts } from '../host/host-facts.js';
import { type Origin, whereSet } from '../origin.js';
import { gidAddress, gidFamily, gidWords, linkLocalGid, roceVersion, validGid } from './gid.js';
import { ncclGidIndex } from './gid-index.js';
import type { IbSettings } from './ib-settings.js';
import { portLabel, type TransportVerdict } from './transport-verdict.js';

/** from: where NCCL_IB_GID_INDEX was set. */
export function checkGidIndex(
  rdma: RdmaFacts,
  settings: IbSettings,
  verdict: TransportVerdict,
  gidIndexText: string | undefined,
  from: Origin,
): string[] {
  const warnings: string[] = [];
  const family = settings.addrFamily === 'ipv4' ? 'IPv4' : 'IPv6';
  for (const used of verdict.devices) {
    if (!used.used || used.linkLayer !== 'Ethernet' || used.gidIndex === null) continue;
    const port = rdma.devices
      .find((device) => device.name === used.name)
      ?.ports.find((entry) => entry.port === used.port);
    if (port === undefined) continue;
    const index = used.gidIndex;
    const entry = port.gids.find((gid) => gid.index === index);
    const label = `${portLabel(used)}${used.netdev === null ? '' : ` (${used.netdev})`}`;
    if (settings.gidIndex >= 0) {
      const setting = `NCCL_IB_GID_INDEX=${gidIndexText ?? index} (set in ${whereSet(from)})`;
      const own = ncclGidIndex(port, { ...settings, gidIndex: -1 });
      const ownEntry = port.gids.find((gid) => gid.index === own);
      const instead =
        own === index || ownEntry === undefined
          ? ''
          : `; unset, NCCL would take GID ${own} (${ownEntry.type ?? 'type unknown'} ${gidAddress(gidWords(ownEntry.gid))})`;
      const problem = gidProblem(index, entry, port.gidTableLength);
      if (problem !== null)
        warnings.push(`${setting}: on ${label} GID ${index} ${problem}${instead}`);
      continue;
    }
    const words = gidWords(entry?.gid);
    const fits =
      entry !== undefined &&
      validGid(words) &&
      gidFamily(words) === settings.addrFamily &&
      roceVersion(entry.type) === settings.roceVersion;
    if (!fits) {
      const other = settings.addrFamily === 'ipv4' ? 'ipv6' : 'ipv4';
      const otherFits = port.gids.some(
        (gid) =>
          validGid(gidWords(gid.gid)) &&
          gidFamily(gidWords(gid.gid)) === other &&
          roceVersion(gid.type) === settings.roceVersion,
      );
      const hint = otherFits
        ? `; it has one of ${other === 'ipv4' ? 'IPv4' : 'IPv6'}: NCCL_IB_ADDR_FAMILY=${other === 'ipv4' ? 'AF_INET' : 'AF_INET6'} takes it`
        : `; give ${used.netdev ?? 'its netdev'} an ${family} address`;
      warnings.push(
        `${label} has no valid RoCE v${settings.roceVersion} GID with an ${family} address, so NCCL will use GID ${index} (${entry === undefined ? 'empty' : `${entry.type ?? 'type unknown'} ${gidAddress(words)}`})${hint}`,
      );
    }
  }
  return warnings;
}

function gidProblem(
  index: number,
  entry: { gid: string; type: string | null } | undefined,
  tableLength: number,
): string | null {
  if (index >= tableLength) return `is past the end of its ${tableLength}-slot GID table`;
  if (entry === undefined) return 'is empty';
  const words = gidWords(entry.gid);
  if (linkLocalGid(words))
    return `is link-local (${gidAddress(words)}), which no other host can reach`;
  if (roceVersion(entry.type) === 1)
    return `is RoCE v1 (${gidAddress(words)}), which does not route between subnets`;
  return null;
}
