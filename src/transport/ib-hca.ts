/**
 * NCCL_IB_HCA as NCCL 2.22 applies it (src/transport/net_ib.cc ncclIbInit,
 * src/misc/utils.cc parseStringList / matchIfList / matchPort): a leading `^`
 * excludes, then a leading `=` makes names exact; entries `name` or
 * `name:port`, at most MAX_IB_DEVS (32); without `=` an entry takes every
 * device whose name starts with it (mlx5_1 also takes mlx5_10); an entry
 * without a port takes every port; an empty list takes everything. A port
 * is kept when matchIfList(device, port, ...) ^ searchNot: the socket rule's
 * ncclIfnameMatches with the port (nccl/nccl-ifname.ts).
 */
import { type NcclIfname, parseNcclIfname } from '../nccl/nccl-ifname.js';

/** net_ib.cc's MAX_IB_DEVS: the entries of userIfs[] and the devices of ncclIbDevs[]. */
export const MAX_IB_DEVS = 32;

export type IbHcaEntry = NcclIfname['names'][number];

export function parseIbHca(value: string): NcclIfname {
  return parseNcclIfname(value, MAX_IB_DEVS);
}

/** The entry as the user wrote it. */
export function entryText(entry: IbHcaEntry): string {
  return entry.port === undefined ? entry.name : `${entry.name}:${entry.port}`;
}
