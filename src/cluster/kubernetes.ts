/**
 * Kubernetes (--cluster k8s): a pod, which KUBERNETES_SERVICE_HOST marks
 * (kubelet sets it in every container), made by one of the controllers
 * nccl-run reads. They are asked in this order, each deciding from what a
 * container sees:
 * - a Kubeflow Trainer v2 TrainJob: an Indexed Job's pod (JOB_COMPLETION_INDEX)
 *   with the torch plugin's master name and no MASTER_ADDR;
 * - a LeaderWorkerSet group: LWS_LEADER_ADDRESS;
 * - a plain JobSet: an Indexed Job's pod whose template gives the shape;
 * - a Kubeflow PyTorchJob (training-operator v1): the operator's MASTER_ADDR
 *   or PET_* in a pod of no Job, last because a TrainJob's PET_* would
 *   also match it.
 */
import { ConfigError } from '../errors.js';
import { jobSet } from './jobset.js';
import { PYTORCHJOB_MARKERS, pytorchJob } from './kubeflow-pytorchjob.js';
import { trainJob } from './kubeflow-trainjob.js';
import { leaderWorkerSet } from './leaderworkerset.js';
import { type ClusterInfo, isSet, type PodController, type Scheduler } from './scheduler.js';

export const POD_CONTROLLERS: readonly PodController[] = [
  trainJob,
  leaderWorkerSet,
  jobSet,
  pytorchJob,
];

export const kubernetes = {
  name: 'k8s',
  detects: (env) =>
    isSet(env.KUBERNETES_SERVICE_HOST) && POD_CONTROLLERS.some((c) => c.recognizes(env)),
  read: fromPod,
} as const satisfies Scheduler;

function fromPod(env: NodeJS.ProcessEnv): ClusterInfo {
  const controller = POD_CONTROLLERS.find((c) => c.recognizes(env));
  if (controller === undefined) {
    throw new ConfigError(
      `--cluster k8s: this pod shows no controller nccl-run reads (a TrainJob's or JobSet's JOB_COMPLETION_INDEX with PET_MASTER_ADDR, a LeaderWorkerSet's LWS_LEADER_ADDRESS, a PyTorchJob's ${PYTORCHJOB_MARKERS.join(', ')}: none is set); use --cluster auto or none`,
    );
  }
  return controller.read(env);
}
