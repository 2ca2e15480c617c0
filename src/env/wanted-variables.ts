/**
 * What nccl-run would export, in the order of SPEC's table ("What it
 * exports"); every output (env, explain, the launch summary) keeps this order.
 */
import type { JobShape } from '../job/job-shape.js';
import type { Decision } from '../resolve/decision.js';
import type { RequiredTransport } from '../transport/transport-requirement.js';
import { SOCKET_FAMILY } from './socket-family.js';

export interface WantedVariable {
  name: string;
  value: string;
  /**
   * Whether --force replaces a user's value. No PET_* variable is ever
   * replaced: each is one of torchrun's own arguments (argparse_util.py `env`
   * makes PET_<DEST> the option's default), which nccl-run reads and never
   * rewrites; for the cluster fill, nccl-run read the job's shape from the
   * user's value, and exporting another would make torchrun run a different
   * job than the one nccl-run checked.
   */
  forceable: boolean;
}

/** Where torchrun reads --local-addr when the command line leaves it out. */
const PET_LOCAL_ADDR = 'PET_LOCAL_ADDR';

export function wantedVariables(
  decision: Decision,
  job: JobShape,
  ncclDebug: string | null,
  ncclDebugSubsys: string | null,
  requireTransport: RequiredTransport | null = null,
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
  // torchrun 2.x's --local-addr (run.py) names this node in the c10d
  // rendezvous (dynamic_rendezvous.py _NodeDescGenerator.generate), and the
  // node that becomes its rank 0 hands it to every worker as MASTER_ADDR
  // (rendezvous/api.py RendezvousStoreInfo.build: `local_addr or
  // socket.getfqdn()`), where the FQDN may resolve to 127.0.1.1 or the
  // management network. torchrun 1.13 has no such option and ignores the
  // variable. A --local-addr on the command line wins over the variable in
  // torchrun, so exporting one then would only misreport; a PET_LOCAL_ADDR of
  // the user's is kept by settleVariables.
  if (job.localAddr === null || job.localAddr.source === PET_LOCAL_ADDR) {
    wanted.push({ name: PET_LOCAL_ADDR, value: decision.address, forceable: false });
  }
  if (ncclDebug !== null) wanted.push({ name: 'NCCL_DEBUG', value: ncclDebug, forceable: true });
  if (ncclDebugSubsys !== null) {
    wanted.push({ name: 'NCCL_DEBUG_SUBSYS', value: ncclDebugSubsys, forceable: true });
  }
  // SPEC --require-transport: NCCL_NET=IB makes ncclNetInit (src/net.cc) fail with "network
  // IB not found" where the IB transport finds no device, instead of running on sockets.
  // The user's NCCL_NET is theirs to keep, --force or not (transport-requirement.ts says
  // when it conflicts).
  if (requireTransport === 'ib') wanted.push({ name: 'NCCL_NET', value: 'IB', forceable: false });
  for (const [name, value] of Object.entries(job.fill))
    wanted.push({ name, value, forceable: false });
  return wanted;
}
