/**
 * Where this node's ephemeral ports come from: net.ipv4.ip_local_port_range
 * (ip-sysctl.rst; it governs IPv6 too), the range NCCL's bootstrap and
 * socket transport listen in when they bind port 0. A firewall must open it
 * between the nodes; the failure that finds it closed names it.
 */
import { readFile } from 'node:fs/promises';

/** The kernel's default since Linux 3.x (include/net/ip.h inet_get_local_port_range). */
const LINUX_DEFAULT: [number, number] = [32_768, 60_999];

export async function localPortRange(
  path = '/proc/sys/net/ipv4/ip_local_port_range',
): Promise<[number, number]> {
  const text = await readFile(path, 'utf8').catch(() => '');
  const [low, high] = text.trim().split(/\s+/).map(Number);
  const valid = (port: number | undefined): port is number =>
    port !== undefined && Number.isInteger(port) && port >= 1 && port <= 65_535;
  return valid(low) && valid(high) && low <= high ? [low, high] : LINUX_DEFAULT;
}
