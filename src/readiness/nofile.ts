/**
 * The descriptor limit (RLIMIT_NOFILE's soft limit, which torchrun and its
 * workers inherit; torch raises it nowhere, NCCL only in its bootstrap root's
 * process, src/bootstrap.cc setFilesLimit) against the job's connections:
 * - on the store host, torch's TCPStore (in torchrun's agent: the static
 *   backend's node rank 0, c10d's endpoint host) holds a connection from
 *   every agent and every worker for the whole job, beside its listening
 *   socket and stdio: below that it cannot accept them all, certainly;
 * - with NCCL's socket transport, a worker that exchanges with every remote
 *   rank (all-to-all, send/recv) opens one connection each way per peer,
 *   each a control socket plus NCCL_NSOCKS_PERTHREAD × NCCL_SOCKET_NTHREADS
 *   data sockets (by default 0, on AWS ENA 2 × 8, on Google gVNIC 4 × 1:
 *   src/transport/net_socket.cc ncclNetSocketGetNsockNthread, v2.22.3-1 to
 *   v2.29.7-1), a warning where that may not fit.
 */
import { ncclIntParam } from '../nccl/nccl-param.js';
import type { CheckInput } from './check-input.js';
import { mayFail, passed, type Verdict, willFail } from './finding.js';
import type { Limit } from './node-readiness.js';
import { atLeast } from './proc-limits.js';
import { type FixByContext, fixFor } from './user-context.js';

/** Beside the store's connections: its listening socket and stdio. */
const STORE_BASE = 4;
/** A worker's own files beside NCCL's sockets: Python, CUDA's device files, the bootstrap. */
const WORKER_BASE = 64;
/** net_socket.cc MAX_SOCKETS. */
const MAX_SOCKETS = 64;

export function checkNofile({ needs, node, ranks }: CheckInput): Verdict {
  if (node.nofile === null)
    return passed("the launcher's descriptor limit could not be read (/proc/PID/limits)");
  const { soft, hard } = node.nofile;
  const have = `open files limit ${soft} (ulimit -n; hard ${hard})`;
  const localRanks = ranks.count ?? 1;
  const fix = (needed: number) => fixFor(node.contexts, nofileFixes(needed, hard));

  const storeNeed = (nodes: number) => nodes * (1 + localRanks) + STORE_BASE;
  if (needs.storeHost) {
    const least = storeNeed(needs.nnodes.min);
    const most = storeNeed(needs.nnodes.max);
    const store = (count: number) =>
      `this node hosts the rendezvous store, which holds a connection from each agent and each worker: ${count} descriptors with ${needs.nnodes.max === needs.nnodes.min ? '' : 'up to '}${needs.nnodes.max} nodes × (1 agent + ${localRanks} workers)`;
    if (!atLeast(soft, least)) return willFail(`${have}; ${store(least)}`, fix(most));
    if (!atLeast(soft, most)) return mayFail(`${have}; ${store(most)}`, fix(most));
  }

  const remoteRanks = needs.nnodes.max * localRanks - localRanks;
  if (needs.transport === 'socket' && remoteRanks > 0) {
    const sockets = Math.min(
      MAX_SOCKETS,
      nsocksPerThread(needs.ncclEnv, node.network?.vendor ?? null) *
        socketThreads(needs.ncclEnv, node.network?.vendor ?? null),
    );
    const worker = remoteRanks * 2 * (1 + sockets) + WORKER_BASE;
    if (!atLeast(soft, worker))
      return mayFail(
        `${have}; with NCCL's socket transport a worker that exchanges with all ${remoteRanks} remote ranks (all-to-all, send/recv) opens ${remoteRanks} × 2 connections of ${1 + sockets} socket${sockets === 0 ? '' : 's'}: about ${worker} descriptors`,
        fix(worker),
      );
  }
  return passed(`${have}; enough for this job's connections`);
}

/** NCCL_SOCKET_NTHREADS, else by the NIC's vendor. */
function socketThreads(env: Readonly<Record<string, string | undefined>>, vendor: string | null) {
  const set = ncclIntParam(env.NCCL_SOCKET_NTHREADS, -2);
  if (set !== -2) return Math.min(Math.max(set, 0), 16);
  return vendor === '0x1d0f' ? 2 : vendor === '0x1ae0' ? 4 : 0;
}

/** NCCL_NSOCKS_PERTHREAD, else by the NIC's vendor. */
function nsocksPerThread(env: Readonly<Record<string, string | undefined>>, vendor: string | null) {
  const set = ncclIntParam(env.NCCL_NSOCKS_PERTHREAD, -2);
  if (set !== -2) return Math.max(set, 0);
  return vendor === '0x1d0f' ? 8 : 1;
}

function nofileFixes(needed: number, hard: Limit): FixByContext {
  const raise = atLeast(hard, needed)
    ? `ulimit -n ${hard === 'unlimited' ? needed : hard} before nccl-run (the hard limit allows it)`
    : null;
  const or = (text: string) => (raise === null ? text : `${raise}, or ${text}`);
  return {
    docker: or(
      `docker run --ulimit nofile=${needed}:${needed}; compose: ulimits: { nofile: ${needed} }`,
    ),
    podman: or(`podman run --ulimit nofile=${needed}:${needed}`),
    kubernetes: or(
      "pods take the container runtime's limit: LimitNOFILE in containerd's (or CRI-O's) systemd unit",
    ),
    slurm: or(
      `Slurm gives tasks the submitting shell's limits (PropagateResourceLimits): submit after ulimit -n ${needed}, or srun --propagate=NONE to keep slurmd's own`,
    ),
    host: or(
      `"* - nofile ${needed}" in /etc/security/limits.conf (LimitNOFILE for a systemd service)`,
    ),
  };
}
