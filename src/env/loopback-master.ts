/**
 * SPEC "Warnings": a multi-node job whose master resolves to loopback on this
 * node. A loopback address reaches only this host, so the other nodes' store
 * clients and NCCL's bootstrap cannot meet there; /etc/hosts is the usual
 * cause (Debian maps the machine's own name to 127.0.1.1).
 */
import { isLoopbackAddress } from '../host/ip-address.js';
import type { JobShape } from '../job/job-shape.js';

export function loopbackMasterWarning(
  job: JobShape,
  masterAddresses: readonly string[],
): string | null {
  if (job.master === null || job.standalone || job.nnodes.max <= 1) return null;
  const loopback = masterAddresses.filter(isLoopbackAddress);
  if (loopback.length === 0) return null;
  const { host } = job.master;
  const what =
    loopback.length === 1 && loopback[0] === host ? host : `${host} (${loopback.join(', ')} here)`;
  return `the master ${what} is a loopback address in a job of up to ${job.nnodes.max} nodes: only processes on this host can reach it; give the master's network address, or fix /etc/hosts if it maps the master's name to loopback (Debian's 127.0.1.1 line)`;
}
