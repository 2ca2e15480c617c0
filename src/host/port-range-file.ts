/**
 * net.ipv4.ip_local_port_range of this network namespace (ip-sysctl.rst; it
 * governs IPv6 too): where the kernel draws a port for a bind to port 0, as
 * NCCL's bootstrap and socket transport, Gloo and the probe mesh do. Per
 * network namespace, so a pod or container may set its own (a safe sysctl
 * in Kubernetes), and a hostNetwork pod has the node's.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** [low, high], or null where the file is missing or says something else. */
export function readPortRange(procRoot = '/proc'): [number, number] | null {
  let text: string;
  try {
    text = readFileSync(join(procRoot, 'sys/net/ipv4/ip_local_port_range'), 'utf8');
  } catch {
    return null;
  }
  return parsePortRangeFile(text);
}

export function parsePortRangeFile(text: string): [number, number] | null {
  const match = /^\s*(\d+)\s+(\d+)\s*$/.exec(text);
  if (match === null) return null;
  const low = Number(match[1]);
  const high = Number(match[2]);
  return low >= 1 && low <= high && high <= 65_535 ? [low, high] : null;
}
