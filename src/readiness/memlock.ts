/**
 * The locked-memory limit against what NCCL registers with the RDMA NIC
 * (ibv_reg_mr pins the pages and counts them against RLIMIT_MEMLOCK, per
 * process, unless the process holds CAP_IPC_LOCK: the kernel's ib_umem_get).
 * What NCCL registers for each network connection (src/transport/net.cc
 * sendProxyConnect and recvProxyConnect at v2.22.3-1 and v2.29.7-1, regMr of
 * each protocol's buffer): the sender's LL buffer lives in host memory
 * always (NCCL_LL_BUFFSIZE, 512 KiB); without GPUDirect RDMA every buffer of
 * both sides does (LL, LL128 and SIMPLE, 9.2 MiB). Below one LL buffer the
 * first connection fails ("unable to register memory"), which is certain
 * under --require-transport ib (NCCL_NET=IB: no falling back to sockets);
 * below the estimate for a rank's connections (two channels, each sending
 * and receiving) it may.
 */

import { ncclBuffSizes, sumBuffSizes } from '../nccl/nccl-buffsizes.js';
import { mib } from '../nccl/nccl-shm.js';
import type { CheckInput } from './check-input.js';
import { mayFail, passed, type Verdict, willFail } from './finding.js';
import { atLeast, limitBytes } from './proc-limits.js';
import { type FixByContext, fixFor } from './user-context.js';

/** Network connections a rank holds: two channels, each a send and a receive (an estimate; NCCL's topology decides). */
const CONNECTIONS = 4;

export function checkMemlock({ needs, node }: CheckInput): Verdict {
  // EFA through aws-ofi-nccl registers memory as verbs do; TCPX and unknown plugins are not judged.
  const rdma = ['ib', 'roce', 'efa'].includes(needs.transport) || needs.requireTransport !== null;
  if (!rdma)
    return passed(
      "NCCL's data goes over sockets here (no usable RDMA port): it registers no memory",
    );
  if (needs.nnodes.max <= 1)
    return passed(
      "a single-node job: NCCL's network transport, which registers memory, is not used",
    );
  if (node.ipcLock === true)
    return passed(
      `CAP_IPC_LOCK is held: memory registration ignores the locked-memory limit${node.memlock === null ? '' : ` (${limitBytes(node.memlock.soft)})`}`,
    );
  if (node.memlock === null)
    return passed("the launcher's locked-memory limit could not be read (/proc/PID/limits)");
  const limit = node.memlock.soft;
  if (limit === 'unlimited') return passed('locked-memory limit: unlimited');

  const sizes = ncclBuffSizes(needs.ncclEnv);
  const llBuffer = sizes.LL;
  const everyBuffer = sumBuffSizes(sizes);
  const perRank = node.gpuDirect ? (CONNECTIONS / 2) * llBuffer : CONNECTIONS * everyBuffer;
  const capability = node.ipcLock === false ? 'no CAP_IPC_LOCK' : 'CAP_IPC_LOCK unknown';
  const have = `locked-memory limit ${limitBytes(limit)} per process (ulimit -l; hard ${limitBytes(node.memlock.hard)}), ${capability}`;
  const fix = fixFor(node.contexts, MEMLOCK_FIXES);
  if (!atLeast(limit, llBuffer)) {
    const evidence = `${have}; NCCL registers at least one ${mib(llBuffer)} LL buffer in host memory for each network connection (src/transport/net.cc), so its IB transport fails at the first ("unable to register memory")`;
    return needs.requireTransport !== null
      ? willFail(
          `${evidence}, and --require-transport ${needs.requireTransport} keeps it from falling back to sockets`,
          fix,
        )
      : mayFail(evidence, fix);
  }
  const how = node.gpuDirect
    ? `the sender's ${mib(llBuffer)} LL buffer per connection (GPUDirect RDMA: nvidia_peermem is loaded)`
    : `${mib(everyBuffer)} of buffers per connection and side (no GPUDirect RDMA seen: nvidia_peermem is not loaded, though DMA-BUF may give it)`;
  const estimate = `NCCL registers about ${mib(perRank)} of host memory per rank: ${how}, for 2 channels (src/transport/net.cc)`;
  if (!atLeast(limit, perRank)) return mayFail(`${have}; ${estimate}`, fix);
  return passed(`${have}; ${estimate}`);
}

const MEMLOCK_FIXES: FixByContext = {
  docker: 'docker run --ulimit memlock=-1:-1; compose: ulimits: { memlock: -1 }',
  podman: 'podman run --ulimit memlock=-1:-1',
  kubernetes:
    "pods take the container runtime's limit: LimitMEMLOCK=infinity in containerd's (or CRI-O's) systemd unit, or securityContext.capabilities.add: [\"IPC_LOCK\"] in the container",
  slurm:
    "Slurm gives tasks the submitting shell's limits (PropagateResourceLimits): submit after ulimit -l unlimited, or srun --propagate=NONE to keep slurmd's own (LimitMEMLOCK=infinity in its unit), or have slurm.conf say PropagateResourceLimitsExcept=MEMLOCK",
  host: 'ulimit -l unlimited before nccl-run (within the hard limit), or "* - memlock unlimited" in /etc/security/limits.conf (LimitMEMLOCK=infinity for a systemd service)',
};
