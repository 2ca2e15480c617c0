import type { Origin, Setting } from '../origin.js';

/**
 * The job's shape as torchrun itself would see it: from its argv, then
 * PET_* variables, then MASTER_ADDR/MASTER_PORT, then the cluster, then
 * torchrun's defaults. Built by read-job-shape.ts.
 */
export interface RendezvousEndpoint {
  host: string;
  port: number;
  /** Where the host came from (--master-addr, PET_RDZV_ENDPOINT, MASTER_ADDR, slurm, the default). */
  origin: Origin;
  /** Where the port came from: the host's own origin when one setting gave both. */
  portOrigin: Origin;
}

export interface JobShape {
  /** static (master_addr:master_port), c10d, etcd, ... as torchrun's --rdzv-backend. */
  rdzvBackend: string;
  /**
   * The endpoint workers rendezvous at: master_addr:master_port for the
   * static backend, the rdzv endpoint otherwise. null with --standalone,
   * where torchrun makes its own endpoint on localhost.
   */
  master: RendezvousEndpoint | null;
  /** For the static backend the same as master; for c10d the --master-addr if given (for the "two networks" warning). */
  masterAddr: string | null;
  nnodes: { min: number; max: number; origin: Origin };
  /** This node's rank; null when elastic (c10d) and not given. */
  nodeRank: { value: number; origin: Origin } | null;
  standalone: boolean;
  /**
   * torch 2.x's --local-addr as torchrun gets it (the command line, else
   * PET_LOCAL_ADDR), and which of the two (its origin: argv or pet); null
   * when neither gives it.
   */
  localAddr: Setting | null;
  /**
   * --rdzv-conf is_host for the c10d backend: when given, it alone decides
   * whether this node hosts the store (c10d_rendezvous_backend.py
   * `_create_tcp_store`); null when not given or not c10d.
   */
  isHost: boolean | null;
  /**
   * --rdzv-conf last_call_timeout, in seconds, else torch's default: how
   * long an elastic rendezvous waits once MIN nodes are there
   * (dynamic_rendezvous.py).
   */
  lastCallTimeoutS: number;
  /**
   * --nproc-per-node as torchrun gets it (the command line, else
   * PET_NPROC_PER_NODE, else torchrun's default): a count, or a word
   * (`gpu`, `cpu`, `auto`) torchrun resolves on the node.
   */
  nprocPerNode: string;
  /** PET_* variables filled in from the cluster, to export (SPEC "What it exports"). */
  fill: Record<string, string>;
  /** Hosts for `--verify peers` from the cluster (Slurm node list), if any. */
  clusterPeers: string[];
  /** Which scheduler filled anything in or listed the hosts, if any (cluster/schedulers.ts). */
  cluster: string | null;
  /**
   * Who made the job, as the scheduler read it (ClusterInfo.controller) and
   * from which variables: explain names both. Null without a cluster, and
   * under --standalone, which reads none.
   */
  controller: { name: string; variables: string[] } | null;
  /** The scheduler's id of the job and its name of this node (SLURM_JOB_ID, SLURMD_NODENAME). */
  jobId: string | null;
  nodeName: string | null;
  /** The cluster's MUNGE, where it has one (ClusterInfo.munge): the probe's membership proves the user by it. */
  munge: { conf: string } | null;
}
