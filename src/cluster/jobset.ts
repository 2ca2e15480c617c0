/**
 * A plain JobSet's pods (kubernetes-sigs/jobset v0.12.0): JobSet sets no
 * variable of its own. It names each child Job `<jobset>-<replicatedJob>-<jobIndex>`
 * (placement.GenJobName) and, with DNS hostnames on (the webhook's
 * default), puts the pods in the subdomain `<jobset>` (or
 * spec.network.subdomain) behind a headless Service, so that pod i of Job
 * j answers at `<jobset>-<replicatedJob>-<j>-<i>.<subdomain>`; who it is
 * lives in labels and annotations (jobset.sigs.k8s.io/jobset-name, ...),
 * which a container sees only through the downward API. A container does
 * see JOB_COMPLETION_INDEX, which Kubernetes' Job controller gives every
 * container of an Indexed Job's pods (the kind JobSet makes).
 *
 * So the job's shape is what the JobSet's template gives: JobSet's own
 * PyTorch examples (site/static/examples/pytorch) set MASTER_ADDR to pod 0's
 * name, MASTER_PORT, and RANK from the completion-index annotation, the
 * pod's node rank; a template may also give torchrun's PET_* directly. As
 * in a v1 PyTorchJob without PET_NPROC_PER_NODE, RANK and WORLD_SIZE then
 * count pods. How many Jobs the JobSet has, and so the node list, no
 * container can see.
 */
import { badValue } from '../errors.js';
import { firstSet, readEnvInteger } from './env-integer.js';
import { type ClusterInfo, isSet, type PodController, setVariables } from './scheduler.js';

const MAX_NODES = 65_536;
/** What a JobSet's template gives for torchrun; any of them makes the pod a job's. */
const SHAPE = [
  'MASTER_ADDR',
  'PET_MASTER_ADDR',
  'PET_NNODES',
  'PET_NODE_RANK',
  'PET_RDZV_ENDPOINT',
  'RANK',
];
const READ = [
  'MASTER_ADDR',
  'PET_MASTER_ADDR',
  'MASTER_PORT',
  'PET_MASTER_PORT',
  'PET_NNODES',
  'WORLD_SIZE',
  'PET_NODE_RANK',
  'RANK',
  'PET_NPROC_PER_NODE',
  'JOB_COMPLETION_INDEX',
];

export const jobSet = {
  name: 'JobSet (Indexed Jobs)',
  recognizes: (env) => isSet(env.JOB_COMPLETION_INDEX) && SHAPE.some((name) => isSet(env[name])),
  read: fromJobSet,
} as const satisfies PodController;

function fromJobSet(env: NodeJS.ProcessEnv): ClusterInfo {
  const master = firstSet(env, ['MASTER_ADDR', 'PET_MASTER_ADDR']);
  const port = firstSet(env, ['MASTER_PORT', 'PET_MASTER_PORT']);
  const podCounting = !isSet(env.PET_NPROC_PER_NODE);
  const count = firstSet(env, podCounting ? ['PET_NNODES', 'WORLD_SIZE'] : ['PET_NNODES']);
  // An elastic MIN:MAX is torchrun's to read.
  const nnodes =
    count === null || /^\s*\d+:\d+\s*$/.test(count.value)
      ? null
      : readEnvInteger(env, count.name, 1, MAX_NODES);
  const rank = firstSet(env, podCounting ? ['PET_NODE_RANK', 'RANK'] : ['PET_NODE_RANK']);
  const nodeRank = rank === null ? null : readEnvInteger(env, rank.name, 0, MAX_NODES - 1);
  if (rank !== null && nodeRank !== null && nnodes !== null && nodeRank >= nnodes) {
    throw badValue(
      { name: rank.name, from: rank.name.startsWith('PET_') ? 'pet' : 'env' },
      String(nodeRank),
      `the job has ${nnodes} nodes (${count?.name}), so it must be 0-${nnodes - 1}`,
    );
  }
  return {
    kind: 'k8s',
    controller: jobSet.name,
    variables: setVariables(env, READ),
    masterHost: master?.value.trim() ?? null,
    masterPort: port === null ? null : readEnvInteger(env, port.name, 1, 65_535),
    nnodes,
    nodeRank,
    peers: [],
    jobId: null,
    nodeName: null,
    munge: null,
    namesComeLate: true,
  };
}
