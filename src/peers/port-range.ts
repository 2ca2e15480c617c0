/**
 * Where this node's ephemeral ports come from (host/port-range-file.ts): the
 * range NCCL's bootstrap and socket transport listen in when they bind port
 * 0. A firewall must open it between the nodes; the failure that finds it
 * closed names it.
 */
import { readPortRange } from '../host/port-range-file.js';

/** The kernel's default since Linux 3.x (include/net/ip.h inet_get_local_port_range). */
const LINUX_DEFAULT: [number, number] = [32_768, 60_999];

export async function localPortRange(): Promise<[number, number]> {
  return readPortRange() ?? LINUX_DEFAULT;
}
