/**
 * What every scheduler module (slurm-job.ts, kubernetes.ts) implements, and
 * what it says about a job; schedulers.ts lists them. Kubernetes is one
 * scheduler (--cluster k8s) whose pods come from several controllers, each
 * a module of its own (kubeflow-trainjob.ts, leaderworkerset.ts, jobset.ts,
 * kubeflow-pytorchjob.ts) behind `PodController`.
 */

/** What a scheduler says about the job; null where it says nothing. */
export interface ClusterInfo {
  /** The scheduler's name, as --cluster takes it. */
  kind: string;
  /** Who made this process's job, as explain names it: "Slurm", "Kubeflow Trainer TrainJob". */
  controller: string;
  /** The variables it was read from, in the order read; explain lists them. */
  variables: string[];
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

/**
 * One Kubernetes controller whose pods say who made them (kubernetes.ts
 * asks each in turn): `recognizes` is decided from what a container sees,
 * its environment, with KUBERNETES_SERVICE_HOST already checked.
 */
export interface PodController {
  /** As explain names it. */
  name: string;
  recognizes(env: NodeJS.ProcessEnv): boolean;
  read(env: NodeJS.ProcessEnv): ClusterInfo;
}

/** The variables among `names` that are set, in that order: what a controller read. */
export function setVariables(env: NodeJS.ProcessEnv, names: readonly string[]): string[] {
  return names.filter((name) => isSet(env[name]));
}

/** Set and not blank: a scheduler exports empty variables in places. */
export function isSet(value: string | undefined): boolean {
  return value !== undefined && value.trim() !== '';
}
