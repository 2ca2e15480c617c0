/**
 * What nccl-run would export, in the order of SPEC's table ("What it
 * exports"); every output (env, explain, the launch summary) keeps this order.
 */
import type { JobShape } from '../job/job-shape.js';
import type { Decision } from '../resolve/decision.js';
import { SOCKET_FAMILY } from './socket-family.js';

export interface WantedVariable {
  name: string;
  value: string;
  /**
   * Whether --force replaces a user's value. The PET_* fill never does: nccl-run
   * read the job's shape from the user's value, and exporting another would
   * make torchrun run a different job than the one nccl-run checked.
   */
  forceable: boolean;
}

export function wantedVariables(
  decision: Decision,
  job: JobShape,
  ncclDebug: string | null,
  ncclDebugSubsys: string | null,
): WantedVariable[] {
  const wanted: WantedVariable[] = [
    // NCCL matches names by prefix unless the list starts with `=`
    // (src/misc/utils.cc matchIfList): plain bond0 would also take bond0.2973.
    { name: 'NCCL_SOCKET_IFNAME', value: `=${decision.interface}`, forceable: true },
    // Gloo and TensorPipe take one exact name (see gloo-ifname.ts).
    { name: 'GLOO_SOCKET_IFNAME', value: decision.interface, forceable: true },
    { name: 'TP_SOCKET_IFNAME', value: decision.interface, forceable: true },
    { name: 'NCCL_SOCKET_FAMILY', value: SOCKET_FAMILY[decision.family], forceable: true },
  ];
  if (ncclDebug !== null) wanted.push({ name: 'NCCL_DEBUG', value: ncclDebug, forceable: true });
  if (ncclDebugSubsys !== null) {
    wanted.push({ name: 'NCCL_DEBUG_SUBSYS', value: ncclDebugSubsys, forceable: true });
  }
  for (const [name, value] of Object.entries(job.fill))
    wanted.push({ name, value, forceable: false });
  return wanted;
}
