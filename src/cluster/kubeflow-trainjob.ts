/**
 * What Kubeflow Trainer v2 tells a TrainJob's pods (kubeflow/trainer v2.3.0:
 * pkg/runtime/framework/plugins/torch/torch.go `EnforceMLPolicy`,
 * pkg/constants/constants.go). A TrainJob runs as a JobSet whose replicated
 * Job `node` (one Job, an Indexed Job of numNodes pods) runs the container
 * `node`; into it the torch plugin puts
 *   PET_NNODES=<numNodes>   PET_NPROC_PER_NODE=<numProcPerNode, or `auto`:
 *                            the CPU count where no GPU is requested>
 *   PET_NODE_RANK           from the pod's batch.kubernetes.io/job-completion-index annotation
 *   PET_MASTER_ADDR=<trainjob>-node-0-0.<trainjob>   PET_MASTER_PORT=29500
 * and no MASTER_ADDR, RANK or WORLD_SIZE (the v1 operator's; kubeflow-pytorchjob.ts).
 * For torchtune it appends `--rdzv_endpoint=<the same host>:29500` to the
 * command instead of PET_MASTER_*. Since v2.3.0 the runtime's
 * `mlPolicy.torch.envInjection` hands the same variables, master included,
 * to the init containers and sidecars it names: a pre-flight check there
 * reads the job as the trainer will.
 *
 * How a container tells it from a v1 PyTorchJob: the pod belongs to an
 * Indexed Job, so Kubernetes' Job controller gives every container, init
 * containers too, JOB_COMPLETION_INDEX (pkg/controller/job
 * `addCompletionIndexEnvVariables`); the v1 operator makes bare pods, and
 * always sets MASTER_ADDR. The trainer's master name then names the
 * TrainJob; where torchtune left it out, the pod's hostname does (JobSet
 * v0.12.0 names the Job `<jobset>-<replicatedJob>-<jobIndex>`, and the Job
 * controller the pod's hostname `<job>-<index>`, in the subdomain `<jobset>`).
 *
 * Before v2.3.0 an init container gets none of it (torch.go at v2.0.1
 * upserts into the container `node` only), so `nccl-run init k8s` gives its
 * pre-flight the job from the pod itself, on every release:
 *   TRAINJOB_NAME   the pod's label jobset.sigs.k8s.io/jobset-name (the
 *                   trainer's jobset plugin names the JobSet after the TrainJob)
 *   PET_NODE_RANK   the job-completion-index annotation, as the plugin reads it
 *   PET_NNODES      the runtime's mlPolicy.numNodes, written beside it
 * and nccl-run derives the master the plugin would have named,
 * <trainjob>-node-0-0.<trainjob>:29500; PET_MASTER_* win where set (v2.3.0's
 * envInjection).
 *
 * torchrun reads every PET_* itself: nccl-run needs none of them filled in,
 * but the master's name comes late (the headless Service answers for a pod
 * once it runs), and the pods' names are the job's node list.
 */
import { badValue } from '../errors.js';
import { readEnvInteger } from './env-integer.js';
import { type ClusterInfo, isSet, type PodController, setVariables } from './scheduler.js';

const MAX_NODES = 65_536;
/** torch.go: the replicated Job and container `node` (constants.Node). */
const NODE_JOB = 'node';
/** torch.go: constants.ContainerTrainerPort, PET_MASTER_PORT's value. */
const TRAINER_PORT = 29_500;
/** The TrainJob's name, from the pod's JobSet label, in the pre-flight of `init k8s`. */
const NAME_FROM_LABEL = 'TRAINJOB_NAME';
const READ = [
  'PET_MASTER_ADDR',
  'PET_MASTER_PORT',
  'PET_NNODES',
  'PET_NODE_RANK',
  'PET_NPROC_PER_NODE',
  'JOB_COMPLETION_INDEX',
  NAME_FROM_LABEL,
];

export const trainJob = {
  name: 'Kubeflow Trainer TrainJob (JobSet)',
  recognizes: (env) =>
    isSet(env.JOB_COMPLETION_INDEX) && !isSet(env.MASTER_ADDR) && trainJobName(env) !== null,
  read: fromTrainJob,
} as const satisfies PodController;

/**
 * The TrainJob's name: from PET_MASTER_ADDR `<name>-node-0-0.<name>`, else
 * from the pre-flight's TRAINJOB_NAME, else (torchtune) from the hostname
 * `<name>-node-0-<index>` beside PET_NNODES.
 */
function trainJobName(env: NodeJS.ProcessEnv): string | null {
  const master = env.PET_MASTER_ADDR?.trim() ?? '';
  if (master !== '') {
    return master.match(/^([a-z0-9][-a-z0-9]*)-node-0-0\.\1$/)?.[1] ?? null;
  }
  const labelled = env[NAME_FROM_LABEL]?.trim() ?? '';
  if (labelled !== '') {
    // A TrainJob's name is a DNS label (RFC 1123): the trainer's master name is built from it.
    if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(labelled)) {
      throw badValue(
        { name: NAME_FROM_LABEL, from: 'env' },
        labelled,
        "expected the TrainJob's name, from the pod's label jobset.sigs.k8s.io/jobset-name",
      );
    }
    return labelled;
  }
  if (!isSet(env.PET_NNODES)) return null;
  return env.HOSTNAME?.trim().match(/^([a-z0-9][-a-z0-9]*)-node-0-\d+$/)?.[1] ?? null;
}

function fromTrainJob(env: NodeJS.ProcessEnv): ClusterInfo {
  const name = trainJobName(env);
  const nnodes = readEnvInteger(env, 'PET_NNODES', 1, MAX_NODES);
  const rankName = isSet(env.PET_NODE_RANK) ? 'PET_NODE_RANK' : 'JOB_COMPLETION_INDEX';
  const nodeRank = readEnvInteger(env, rankName, 0, MAX_NODES - 1);
  if (nodeRank !== null && nnodes !== null && nodeRank >= nnodes) {
    throw badValue(
      { name: rankName, from: rankName === 'PET_NODE_RANK' ? 'pet' : 'env' },
      String(nodeRank),
      `the TrainJob has ${nnodes} nodes (PET_NNODES), so it must be 0-${nnodes - 1}`,
    );
  }
  return {
    kind: 'k8s',
    controller: trainJob.name,
    variables: setVariables(env, READ),
    masterHost: env.PET_MASTER_ADDR?.trim() || derivedMaster(env, name),
    masterPort:
      readEnvInteger(env, 'PET_MASTER_PORT', 1, 65_535) ??
      (derivedMaster(env, name) === null ? null : TRAINER_PORT),
    nnodes,
    nodeRank,
    peers:
      name === null || nnodes === null
        ? []
        : Array.from({ length: nnodes }, (_, i) => `${name}-${NODE_JOB}-0-${i}.${name}`),
    jobId: null,
    nodeName: null,
    munge: null,
    namesComeLate: true,
  };
}

/**
 * What the torch plugin would have set as PET_MASTER_ADDR, for a pre-flight
 * that has the TrainJob's name from its label but none of the plugin's
 * variables (torchtune's node containers keep the master on their command line).
 */
function derivedMaster(env: NodeJS.ProcessEnv, name: string | null): string | null {
  if (name === null || !isSet(env[NAME_FROM_LABEL]) || isSet(env.PET_MASTER_ADDR)) return null;
  return `${name}-${NODE_JOB}-0-0.${name}`;
}
