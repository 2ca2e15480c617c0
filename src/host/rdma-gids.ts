/**
 * A port's GID table as the kernel shows it (drivers/infiniband/core/sysfs.c,
 * Documentation/ABI/stable/sysfs-class-infiniband): ports/N/gids/I for every
 * slot of the table (gid_tbl_len files), gid_attrs/types/I ("IB/RoCE v1" or
 * "RoCE v2") and gid_attrs/ndevs/I (the netdev's name).
 *
 * show_port_gid prints an empty slot as the zero GID; types/I and ndevs/I
 * fail with EINVAL there (and ndevs/I on an InfiniBand GID, which has no
 * netdev). Only the slots that hold a GID are read further and kept: NCCL's
 * GID choice passes over zero GIDs (net_ib.cc configuredGid), and a RoCE
 * table has 255 slots of which a handful are used.
 *
 * `slots` bounds the slots read: NCCL 2.22 reads an InfiniBand port's GIDs
 * only at 0 and NCCL_IB_ROUTABLE_FLID_GID_INDEX (1), and the rest of such a
 * table (GUIDs a subnet manager assigns) would cost a read each at every start.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { attempt } from './attempt.js';
import type { GidEntry } from './host-facts.js';
import { readSysfsText } from './sysfs-text.js';

const ZERO_GID = /^[0:]+$/;

export interface GidTable {
  length: number;
  gids: GidEntry[];
}

export function readGidTable(portDir: string, slots = Number.POSITIVE_INFINITY): GidTable {
  const indexes = (attempt(() => readdirSync(join(portDir, 'gids'))) ?? [])
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .sort((a, b) => a - b);
  const gids: GidEntry[] = [];
  for (const index of indexes.slice(0, slots)) {
    const gid = readSysfsText(join(portDir, 'gids', String(index)));
    if (gid === null || ZERO_GID.test(gid)) continue;
    gids.push({
      index,
      gid,
      type: readSysfsText(join(portDir, 'gid_attrs/types', String(index))),
      netdev: readSysfsText(join(portDir, 'gid_attrs/ndevs', String(index))),
    });
  }
  return { length: indexes.length, gids };
}
