/**
 * NCCL_IB_HCA as NCCL 2.22 applies it (src/transport/net_ib.cc ncclIbInit,
 * src/misc/utils.cc parseStringList / matchIfList / matchPort): a leading `^`
 * excludes, then a leading `=` makes names exact; entries `name` or
 * `name:port`, at most MAX_IB_DEVS (32); without `=` an entry takes every
 * device whose name starts with it (mlx5_1 also takes mlx5_10); an entry
 * without a port takes every port; an empty list takes everything. A port
 * is kept when matchIfList(device, port, ...) ^ searchNot.
 */
import { type NcclIfname, parseNcclIfname } from '../resolve/nccl-ifname.js';

/** ncclIbInit's struct netIf userIfs[MAX_IB_DEVS]. */
const MAX_IB_DEVS = 32;

export type IbHcaEntry = NcclIfname['names'][number];

export function parseIbHca(value: string): NcclIfname {
  return parseNcclIfname(value, MAX_IB_DEVS);
}

/** matchIf and matchPort for one entry (a port of -1, none given, matches any). */
export function entryMatches(
  entry: IbHcaEntry,
  exact: boolean,
  device: string,
  port: number,
): boolean {
  const name = exact ? device === entry.name : device.startsWith(entry.name);
  return name && (entry.port === undefined || entry.port === -1 || entry.port === port);
}

/** Whether NCCL keeps this device port under the list. */
export function hcaSelects(list: NcclIfname, device: string, port: number): boolean {
  const listed =
    list.names.length === 0 ||
    list.names.some((entry) => entryMatches(entry, list.exact, device, port));
  return list.mode === 'exclude' ? !listed : listed;
}

/** The entry as the user wrote it. */
export function entryText(entry: IbHcaEntry): string {
  return entry.port === undefined ? entry.name : `${entry.name}:${entry.port}`;
}
