/**
 * A TrainJob's pods as Kubeflow Trainer v2, JobSet and Kubernetes' Job
 * controller make them, for `podman kube play` (none of them runs here).
 * Read at the source:
 * - kubeflow/trainer v2.3.0 pkg/runtime/framework/plugins/torch/torch.go
 *   `EnforceMLPolicy`: numNodes becomes the count of the replicated Job
 *   `node`; into its container `node` go trainer.image/command/args/env,
 *   the port 29500 and
 *     PET_NNODES=<numNodes>  PET_NPROC_PER_NODE=<numProcPerNode>
 *     PET_NODE_RANK          (fieldRef: the job-completion-index annotation)
 *     PET_MASTER_ADDR=<trainjob>-node-0-0.<trainjob>  PET_MASTER_PORT=29500
 *   and, for each container envInjection names (init containers included),
 *   the same five; resourcesPerNode becomes the node container's resources.
 *   At v2.0.1 torch.go gives the container `node` the same and nothing else:
 *   no init container gets any of it, and the CRD has no envInjection
 *   (`expandTrainJob(docs, 'v2.0.1')` plays that release).
 * - kubernetes-sigs/jobset v0.12.0 pkg/controllers/jobset_controller.go
 *   `constructJob`: the Job `<jobset>-<replicatedJob>-<jobIndex>` (JobSet
 *   named as the TrainJob), labels jobset.sigs.k8s.io/*, subdomain
 *   `<jobset>`; pkg/webhooks: restartPolicy OnFailure when the template
 *   has none.
 * - kubernetes pkg/controller/job (Indexed Jobs): pod i has hostname
 *   `<job>-<i>`, the annotation batch.kubernetes.io/job-completion-index=i,
 *   and JOB_COMPLETION_INDEX in every container, init containers too.
 * podman stands in for what the cluster adds: kube play honours no
 * fieldRef to an annotation, so PET_NODE_RANK and JOB_COMPLETION_INDEX are
 * written as the values kubelet would resolve; the pod is named after its
 * DNS name `<job>-<i>.<subdomain>` (which aardvark-dns then answers, as the
 * headless Service does), its hostname `<job>-<i>`.
 */
import { parseAllDocuments } from 'yaml';
import { type Container, type EnvVar, type JobPod, jobPod } from './pytorchjob-pods.js';

/**
 * The Trainer releases whose controllers the lab plays: v2.0.1 (the first
 * v2 release users run) gives init containers none of the torch plugin's
 * variables and has no envInjection (torch.go, trainingruntime_types.go at
 * v2.0.1); v2.3.0 hands them to the init containers envInjection names.
 */
export type TrainerRelease = 'v2.0.1' | 'v2.3.0';

export interface TrainJob {
  metadata: { name: string };
  spec: {
    runtimeRef: { name: string; kind?: string };
    trainer: {
      numNodes?: number;
      numProcPerNode?: number;
      image?: string;
      command?: string[];
      args?: string[];
      env?: EnvVar[];
      resourcesPerNode?: Record<string, unknown>;
    };
  };
}

interface PodSpec {
  initContainers?: Container[];
  containers: Container[];
  restartPolicy?: string;
  [key: string]: unknown;
}

export interface TrainingRuntime {
  metadata: { name: string };
  spec: {
    mlPolicy: {
      numNodes?: number;
      torch?: { envInjection?: { targets: { jobName: string; containerNames: string[] }[] } };
    };
    template: {
      spec: {
        replicatedJobs: {
          name: string;
          template: {
            metadata?: { labels?: Record<string, string> };
            spec: {
              template: {
                metadata?: {
                  labels?: Record<string, string>;
                  annotations?: Record<string, string>;
                };
                spec: PodSpec;
              };
            };
          };
        }[];
      };
    };
  };
}

/** The TrainJob and TrainingRuntime documents of `nccl-run init k8s`. */
export function parseTrainJob(text: string): { job: TrainJob; runtime: TrainingRuntime } {
  const docs = parseAllDocuments(text).map((doc) => doc.toJS() as { kind: string });
  const job = docs.find((doc) => doc.kind === 'TrainJob') as unknown as TrainJob | undefined;
  const runtime = docs.find((doc) => doc.kind === 'TrainingRuntime') as unknown as
    | TrainingRuntime
    | undefined;
  if (job === undefined || runtime === undefined) throw new Error('not a TrainJob and its runtime');
  return { job, runtime };
}

/** torch.go: constants.Node and constants.ContainerTrainerPort. */
const NODE = 'node';
const TRAINER_PORT = 29500;

/** Every pod of the TrainJob's `node` Job, node 0 (the master) first, as `release` makes them. */
export function expandTrainJob(
  {
    job,
    runtime,
  }: {
    job: TrainJob;
    runtime: TrainingRuntime;
  },
  release: TrainerRelease = 'v2.3.0',
): JobPod[] {
  const name = job.metadata.name;
  const { trainer } = job.spec;
  const replicated = runtime.spec.template.spec.replicatedJobs.find((r) => r.name === NODE);
  if (replicated === undefined) throw new Error('the runtime has no replicated Job `node`');
  const count = trainer.numNodes ?? runtime.spec.mlPolicy.numNodes ?? 1;
  if (trainer.numProcPerNode === undefined)
    throw new Error('this lab expands a fixed numProcPerNode');
  const envInjection = runtime.spec.mlPolicy.torch?.envInjection;
  if (release === 'v2.0.1' && envInjection !== undefined) {
    throw new Error(
      'Trainer v2.0.1 has no mlPolicy.torch.envInjection: its CRD rejects the runtime',
    );
  }
  const injected =
    envInjection?.targets
      .filter((target) => target.jobName === NODE)
      .flatMap((target) => target.containerNames) ?? [];
  const jobName = `${name}-${NODE}-0`;
  const subdomain = name;

  return Array.from({ length: count }, (_, index) => {
    const template = structuredClone(replicated.template.spec.template);
    const pet: EnvVar[] = [
      { name: 'PET_NNODES', value: String(count) },
      { name: 'PET_NPROC_PER_NODE', value: String(trainer.numProcPerNode) },
      { name: 'PET_NODE_RANK', value: String(index) },
      { name: 'PET_MASTER_ADDR', value: `${name}-${NODE}-0-0.${name}` },
      { name: 'PET_MASTER_PORT', value: String(TRAINER_PORT) },
    ];
    const completionIndex = { name: 'JOB_COMPLETION_INDEX', value: String(index) };
    const upsert = (container: Container, vars: EnvVar[]) => {
      const names = new Set(vars.map((v) => v.name));
      container.env = [...(container.env ?? []).filter((v) => !names.has(v.name)), ...vars];
    };
    for (const container of template.spec.containers) {
      if (container.name === NODE) {
        if (trainer.image !== undefined) container.image = trainer.image;
        if (trainer.command !== undefined) container.command = trainer.command;
        if (trainer.args !== undefined) container.args = trainer.args;
        if (trainer.resourcesPerNode !== undefined) container.resources = trainer.resourcesPerNode;
        upsert(container, [...(trainer.env ?? []), ...pet]);
        container.ports = [{ containerPort: TRAINER_PORT }];
      }
      upsert(container, [completionIndex]);
    }
    for (const init of template.spec.initContainers ?? []) {
      upsert(init, [...(injected.includes(init.name) ? pet : []), completionIndex]);
    }
    const podName = `${jobName}-${index}`;
    return jobPod(
      `${podName}.${subdomain}`,
      index === 0 ? 'master' : 'worker',
      index,
      {
        labels: {
          ...replicated.template.metadata?.labels,
          ...template.metadata?.labels,
          'jobset.sigs.k8s.io/jobset-name': name,
          'jobset.sigs.k8s.io/replicatedjob-name': NODE,
          'jobset.sigs.k8s.io/job-index': '0',
          'batch.kubernetes.io/job-completion-index': String(index),
        },
        annotations: {
          ...template.metadata?.annotations,
          'batch.kubernetes.io/job-completion-index': String(index),
        },
      },
      {
        ...template.spec,
        hostname: podName,
        subdomain,
        restartPolicy: template.spec.restartPolicy ?? 'OnFailure',
      },
    );
  });
}
