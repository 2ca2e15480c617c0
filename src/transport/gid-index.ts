/**
 * The GID index NCCL 2.22 uses on a port (src/transport/net_ib.cc
 * ncclIbGetGidIndex, v2.22.3-1):
 * - InfiniBand: NCCL_IB_ROUTABLE_FLID_GID_INDEX (1) when that GID carries a
 *   FLID (bits 32-47 of the raw GID), else 0; NCCL_IB_GID_INDEX is not read.
 * - RoCE: NCCL_IB_GID_INDEX when set (>= 0); else, starting from 0, each
 *   later slot replaces the current one (ncclUpdateGidIndex) when it is of
 *   NCCL_IB_ADDR_FAMILY (AF_INET unless set) and in NCCL_IB_ADDR_RANGE, and
 *   either the current one is of the other family, or the candidate is valid
 *   and of NCCL_IB_ROCE_VERSION_NUM (2) where the current one is not of that
 *   version or not valid. On a usual table (fe80 v1, fe80 v2, IPv4 v1,
 *   IPv4 v2) that is the RoCE v2 GID of the netdev's IPv4 address.
 */
import type { GidEntry, RdmaPortFacts } from '../host/host-facts.js';
import { gidFamily, gidInRange, gidWords, roceVersion, validGid } from './gid.js';
import type { IbSettings } from './ib-settings.js';

export function ncclGidIndex(port: RdmaPortFacts, settings: IbSettings): number {
  const byIndex = new Map(port.gids.map((entry) => [entry.index, entry]));
  const words = (index: number) => gidWords(byIndex.get(index)?.gid);
  if (port.linkLayer === 'InfiniBand') {
    const routable = settings.routableFlidGidIndex;
    return routable < port.gidTableLength && (words(routable)[2] ?? 0) !== 0 ? routable : 0;
  }
  if (settings.gidIndex >= 0) return settings.gidIndex;
  let current = 0;
  for (let candidate = 1; candidate < port.gidTableLength; candidate += 1) {
    current = updateGidIndex(current, candidate, words, byIndex, settings);
  }
  return current;
}

function updateGidIndex(
  current: number,
  candidate: number,
  words: (index: number) => readonly number[],
  byIndex: ReadonlyMap<number, GidEntry>,
  settings: IbSettings,
): number {
  const [gid, next] = [words(current), words(candidate)];
  const family = settings.addrFamily;
  const inRange = gidInRange(next, family, settings.addrRange);
  if (gidFamily(next) !== gidFamily(gid) && gidFamily(next) === family && inRange) return candidate;
  if (gidFamily(next) !== family || !validGid(next) || !inRange) return current;
  const version = roceVersion(byIndex.get(current)?.type ?? null);
  const nextVersion = roceVersion(byIndex.get(candidate)?.type ?? null);
  return (version !== nextVersion || !validGid(gid)) && nextVersion === settings.roceVersion
    ? candidate
    : current;
}
