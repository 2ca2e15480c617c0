/**
 * What Kubeflow's training operator tells a PyTorchJob pod
 * (kubeflow/training-operator pkg/controller.v1/pytorch: envvar.go, master.go,
 * elastic.go), and which of it torchrun already reads.
 *
 * With a Master replica the operator sets, on every pod (checked at v1.8.1,
 * commit 0f8735fa; the Kubernetes tier runs pods made so, test/lab/pytorchjob-pods.ts):
 *   MASTER_ADDR=<job>-master-0   MASTER_PORT=<the "pytorchjob-port" port, 23456 by default>
 *   PET_MASTER_ADDR, PET_MASTER_PORT (the same; v1.7.0 and later)
 *   WORLD_SIZE=<replicas × nproc>  RANK=<0 on the master, worker index + 1 on workers>
 *   PET_NPROC_PER_NODE  PET_NODE_RANK (= RANK)  PET_NNODES=<all replicas>
 * With an elasticPolicy: PET_RDZV_ENDPOINT=<job>-worker-0:<port>, PET_RDZV_BACKEND
 * (c10d), PET_NNODES=<min:max or the worker replicas>, PET_MAX_RESTARTS, ...
 *
 * torchrun reads every PET_<DEST> as the default of its own --<dest>
 * (torch/distributed/argparse_util.py `env`), so PET_NNODES, PET_NODE_RANK and
 * PET_RDZV_ENDPOINT need no help, nor PET_MASTER_ADDR/PET_MASTER_PORT where
 * the operator sets them. It does not read MASTER_ADDR/MASTER_PORT (its
 * --master-addr defaults to 127.0.0.1): for operators before v1.7 those are
 * what nccl-run maps to PET_MASTER_ADDR/PET_MASTER_PORT. Operators before PET_NNODES existed set
 * only WORLD_SIZE and RANK, counting pods: with no PET_NPROC_PER_NODE they are
 * the node count and node rank.
 *
 * Init containers get none of it (envvar.go `setPodEnv` fills containers
 * only; checked at v1.9.4), so the pre-flight of `nccl-run init pytorchjob`
 * reads the job from the labels the operator puts on every pod
 * (pkg/controller.v1/common/pod.go; kubeflow.org/v1 common_types.go),
 * through the downward API, beside PET_NNODES written in the template:
 *   PYTORCHJOB_NAME           training.kubeflow.org/job-name
 *   PYTORCHJOB_REPLICA_TYPE   training.kubeflow.org/replica-type (master, worker)
 *   PYTORCHJOB_REPLICA_INDEX  training.kubeflow.org/replica-index
 * and nccl-run derives what the operator sets in the containers: the master
 * <job>-master-0, and the node rank, 0 on the master and index + 1 on a
 * worker (envvar.go).
 */
import { badValue } from '../errors.js';
import { readEnvInteger } from './env-integer.js';
import { type ClusterInfo, isSet, type PodController, setVariables } from './scheduler.js';

const MAX_NODES = 65_536;
/**
 * Any of these in a pod is taken as a PyTorchJob's, once the controllers
 * asked before it (kubernetes.ts) have not recognised theirs.
 */
export const PYTORCHJOB_MARKERS = [
  'MASTER_ADDR',
  'PET_NNODES',
  'PET_NODE_RANK',
  'PET_RDZV_ENDPOINT',
];
const READ = [
  'MASTER_ADDR',
  'MASTER_PORT',
  'PET_NNODES',
  'PET_NODE_RANK',
  'PET_NPROC_PER_NODE',
  'WORLD_SIZE',
  'RANK',
  'PYTORCHJOB_NAME',
  'PYTORCHJOB_REPLICA_TYPE',
  'PYTORCHJOB_REPLICA_INDEX',
];

export const pytorchJob = {
  name: 'Kubeflow PyTorchJob (training-operator v1)',
  recognizes: (env) => PYTORCHJOB_MARKERS.some((name) => isSet(env[name])),
  read: fromPyTorchJob,
} as const satisfies PodController;

function fromPyTorchJob(env: NodeJS.ProcessEnv): ClusterInfo {
  const labelled = fromLabels(env);
  const masterHost = env.MASTER_ADDR?.trim() || labelled?.masterHost || null;
  const masterPort = readEnvInteger(env, 'MASTER_PORT', 1, 65_535);
  const podCounting = (env.PET_NPROC_PER_NODE ?? '').trim() === '';

  const nnodes =
    readNodeCount(env) ?? (podCounting ? readEnvInteger(env, 'WORLD_SIZE', 1, MAX_NODES) : null);
  const rankName =
    podCounting && (env.PET_NODE_RANK ?? '').trim() === '' ? 'RANK' : 'PET_NODE_RANK';
  const nodeRank = readEnvInteger(env, rankName, 0, MAX_NODES - 1) ?? labelled?.nodeRank ?? null;
  if (nodeRank !== null && nnodes !== null && nodeRank >= nnodes) {
    throw badValue(
      { name: rankName, from: rankName === 'RANK' ? 'env' : 'pet' },
      String(nodeRank),
      `the job has ${nnodes} nodes, so it must be 0-${nnodes - 1}`,
    );
  }

  return {
    kind: 'k8s',
    controller: pytorchJob.name,
    variables: setVariables(env, READ),
    masterHost,
    masterPort,
    nnodes,
    nodeRank,
    peers: replicaServices(masterHost, nnodes),
    jobId: null,
    nodeName: null,
    munge: null,
    namesComeLate: true,
  };
}

/** PET_NNODES as a count; null when unset or elastic (`MIN:MAX`, which torchrun reads itself). */
function readNodeCount(env: NodeJS.ProcessEnv): number | null {
  const raw = env.PET_NNODES?.trim() ?? '';
  if (/^\d+:\d+$/.test(raw)) return null;
  return readEnvInteger(env, 'PET_NNODES', 1, MAX_NODES);
}

/**
 * The operator gives every replica a headless Service named like its pod,
 * <job>-<master|worker>-<index> (common job controller, GenGeneralName), so a
 * job with a master and n-1 workers is reachable at those names.
 */
function replicaServices(masterHost: string | null, nnodes: number | null): string[] {
  const job = masterHost?.match(/^(.+)-master-0$/)?.[1];
  if (job === undefined || nnodes === null) return [];
  return [
    masterHost as string,
    ...Array.from({ length: nnodes - 1 }, (_, i) => `${job}-worker-${i}`),
  ];
}

/** The pre-flight's labels: the master and node rank the operator would set. */
function fromLabels(
  env: NodeJS.ProcessEnv,
): { masterHost: string; nodeRank: number | null } | null {
  const job = env.PYTORCHJOB_NAME?.trim() ?? '';
  if (job === '') return null;
  const type = env.PYTORCHJOB_REPLICA_TYPE?.trim() ?? '';
  if (type !== '' && type !== 'master' && type !== 'worker') {
    throw badValue(
      { name: 'PYTORCHJOB_REPLICA_TYPE', from: 'env' },
      type,
      "expected master or worker, the pod's label training.kubeflow.org/replica-type",
    );
  }
  const index = readEnvInteger(env, 'PYTORCHJOB_REPLICA_INDEX', 0, MAX_NODES - 1);
  const nodeRank = type === '' || index === null ? null : type === 'master' ? index : index + 1;
  return { masterHost: `${job}-master-0`, nodeRank };
}
