/**
 * What every scheduler module (slurm-job.ts, kubeflow-pytorchjob.ts)
 * implements, and what it says about a job; schedulers.ts lists them.
 */

/** What a scheduler says about the job; null where it says nothing. */
export interface ClusterInfo {
  /** The scheduler's name, as --cluster takes it. */
  kind: string;
  masterHost: string | null;
  masterPort: number | null;
  nnodes: number | null;
  nodeRank: number | null;
  /** The job's hosts, in rank order: who --verify peers expects to register. */
  peers: string[];
  /** What tells this job from another on the same nodes (the probe's token). */
  jobId: string | null;
  /** This node's name in the scheduler's host list, for progress and errors. */
  nodeName: string | null;
  /**
   * The cluster proves its users with MUNGE (every node runs munged with one
   * key, as Slurm's auth/munge needs), and `conf` is the file that names its
   * socket; null where the cluster has no such credential.
   */
  munge: { conf: string } | null;
  /**
   * The master's name may not resolve yet when a node starts (a pod's DNS
   * record appears once that pod runs): a failed lookup is retried within
   * --verify-timeout, as torch's store client retries.
   */
  namesComeLate: boolean;
}

export interface Scheduler {
  name: string;
  /** For --cluster auto: whether this environment is one of its jobs. */
  detects(env: NodeJS.ProcessEnv): boolean;
  /** What the job says; a ConfigError naming the variable for a bad value, or when this is not one of its jobs. */
  read(env: NodeJS.ProcessEnv): ClusterInfo;
}

/** Set and not blank: a scheduler exports empty variables in places. */
export function isSet(value: string | undefined): boolean {
  return value !== undefined && value.trim() !== '';
}
