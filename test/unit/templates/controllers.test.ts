/**
 * What the controllers do with the templates, read at their tags and played
 * by the lab's expansions (test/lab/*-pods.ts), which the Kubernetes tier
 * also runs under podman:
 * - the TrainJob webhook's order rule (kubeflow/trainer v2.0.1 and v2.3.0
 *   pkg/runtime/core/trainingruntime.go `ValidateObjects`: the runtime is
 *   fetched, and a TrainJob whose runtime is missing is denied);
 * - what each controller gives an init container, and that the pre-flight
 *   reads there the job the training container reads:
 *
 *   controller (tag, file)                                     init container gets
 *   Trainer v2.0.1 torch.go EnforceMLPolicy                     nothing (container `node` only)
 *   Trainer v2.3.0 torch.go EnforceMLPolicy                     PET_* and PET_MASTER_* where envInjection names it
 *   Kubernetes Job controller indexed_job_utils.go              JOB_COMPLETION_INDEX (every Indexed Job's pod)
 *     addCompletionIndexEnvVariables
 *   lws v0.6.3, v0.10.0 pkg/utils/pod/pod_utils.go              LWS_LEADER_ADDRESS, LWS_GROUP_SIZE, LWS_WORKER_INDEX
 *     AddLWSVariables
 *   training operator v1.9.4 pytorch/envvar.go setPodEnv        nothing (containers only)
 *
 *   and kubelet resolves the templates' downward-API variables from the
 *   pod's labels and annotations, which the controllers set.
 */
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import type { ClusterInfo } from '../../../src/cluster/scheduler.js';
import { detectCluster } from '../../../src/cluster/schedulers.js';
import { templateText } from '../../../src/templates/init.js';
import { expandLeaderWorkerSet, parseLeaderWorkerSet } from '../../lab/lws-pods.js';
import { expandPyTorchJob, type JobPod, parsePyTorchJob } from '../../lab/pytorchjob-pods.js';
import { expandTrainJob, parseTrainJob, type TrainerRelease } from '../../lab/trainjob-pods.js';

/** What a container of the pod sees: kubelet's KUBERNETES_SERVICE_HOST, the pod's hostname, its env. */
function containerEnv(pod: JobPod, which: 'init' | 'main'): NodeJS.ProcessEnv {
  const spec = pod.manifest.spec as JobPod['manifest']['spec'] & {
    initContainers?: JobPod['manifest']['spec']['containers'];
    hostname?: string;
  };
  const [container] = which === 'init' ? (spec.initContainers ?? []) : spec.containers;
  if (container === undefined) throw new Error(`the pod has no ${which} container`);
  return {
    KUBERNETES_SERVICE_HOST: '10.96.0.1',
    HOSTNAME: spec.hostname ?? pod.manifest.metadata.name,
    ...Object.fromEntries((container.env ?? []).map((v) => [v.name, v.value])),
  };
}

/** The job as nccl-run reads it: the shape both containers must agree on. */
const shapeOf = (info: ClusterInfo | null) =>
  info && {
    controller: info.controller,
    masterHost: info.masterHost,
    nnodes: info.nnodes,
    nodeRank: info.nodeRank,
    peers: info.peers,
  };

describe("the TrainJob webhook: a TrainJob's runtime must exist first", () => {
  /**
   * `kubectl apply -f` creates the documents in file order; the webhook
   * looks the runtime up when the TrainJob is created.
   */
  function applyInOrder(text: string): string[] {
    const created = new Set<string>();
    const denied: string[] = [];
    for (const doc of parseAllDocuments(text).map((d) => d.toJS())) {
      if (doc.kind === 'TrainJob') {
        const { name, kind } = doc.spec.runtimeRef;
        if (!created.has(`${kind ?? 'ClusterTrainingRuntime'}/${name}`)) {
          denied.push(
            `TrainJob ${doc.metadata.name}: spec.runtimeRef: ${kind} ${name} not found: specified trainingRuntime must be created before the TrainJob is created`,
          );
          continue;
        }
      }
      created.add(`${doc.kind}/${doc.metadata.name}`);
    }
    return denied;
  }

  it('the template: runtime first, nothing denied', () => {
    expect(applyInOrder(templateText('k8s'))).toEqual([]);
  });

  it('the other order (the template before this fix) is denied on its first apply', () => {
    const [runtime, job] = templateText('k8s').split(/^---$/m);
    expect(applyInOrder(`${job}\n---\n${runtime}`)).toEqual([
      'TrainJob train: spec.runtimeRef: TrainingRuntime torch-distributed-nccl-run not found: specified trainingRuntime must be created before the TrainJob is created',
    ]);
  });
});

describe.each(['v2.0.1', 'v2.3.0'] as TrainerRelease[])('a TrainJob on Trainer %s', (release) => {
  const pods = expandTrainJob(parseTrainJob(templateText('k8s')), release);

  it('gives the pre-flight no PET_MASTER_*: no envInjection in the template, none before v2.3.0', () => {
    for (const pod of pods) {
      const env = containerEnv(pod, 'init');
      expect(env.PET_MASTER_ADDR).toBeUndefined();
      expect(env.JOB_COMPLETION_INDEX).toBe(String(pod.index));
      expect(env.TRAINJOB_NAME).toBe('train');
    }
  });

  it.each([0, 1])('node %i: the pre-flight reads the job the training container reads', (index) => {
    const pod = pods[index] as JobPod;
    const main = detectCluster('auto', containerEnv(pod, 'main'));
    expect(shapeOf(detectCluster('auto', containerEnv(pod, 'init')))).toEqual(shapeOf(main));
    expect(main).toMatchObject({
      masterHost: 'train-node-0-0.train',
      masterPort: 29_500,
      nnodes: 2,
      nodeRank: index,
      peers: ['train-node-0-0.train', 'train-node-0-1.train'],
    });
  });
});

it('Trainer v2.3.0 with envInjection naming the pre-flight: the same job, from the injected PET_*', () => {
  const docs = parseTrainJob(templateText('k8s'));
  docs.runtime.spec.mlPolicy.torch = {
    envInjection: { targets: [{ jobName: 'node', containerNames: ['nccl-run'] }] },
  };
  const [, worker] = expandTrainJob(docs, 'v2.3.0') as JobPod[];
  const env = containerEnv(worker as JobPod, 'init');
  expect(env.PET_MASTER_ADDR).toBe('train-node-0-0.train');
  expect(shapeOf(detectCluster('auto', env))).toEqual(
    shapeOf(detectCluster('auto', containerEnv(worker as JobPod, 'main'))),
  );
  expect(() => expandTrainJob(docs, 'v2.0.1')).toThrow(/no mlPolicy.torch.envInjection/);
});

describe('a PyTorchJob (training operator v1.9.4)', () => {
  const pods = expandPyTorchJob(parsePyTorchJob(templateText('pytorchjob')));

  it.each([
    ['master', 0],
    ['worker', 1],
  ])(
    '%s: the pre-flight reads, from the labels, the master and rank the operator sets',
    (type, rank) => {
      const pod = pods.find((p) => p.replicaType === type) as JobPod;
      const init = containerEnv(pod, 'init');
      expect(init.MASTER_ADDR).toBeUndefined();
      expect(shapeOf(detectCluster('auto', init))).toEqual(
        shapeOf(detectCluster('auto', containerEnv(pod, 'main'))),
      );
      expect(detectCluster('auto', init)).toMatchObject({
        masterHost: 'train-master-0',
        nnodes: 2,
        nodeRank: rank,
      });
    },
  );
});

// AddLWSVariables reads the same at v0.6.3 and v0.10.0: one expansion plays both.
describe('a LeaderWorkerSet (lws v0.6.3 through v0.10.0)', () => {
  const pods = expandLeaderWorkerSet(parseLeaderWorkerSet(templateText('lws')));

  it.each([0, 1])(
    'pod %i: LWS_* reach the pre-flight, the same job as the training container',
    (index) => {
      const pod = pods[index] as JobPod;
      expect(shapeOf(detectCluster('auto', containerEnv(pod, 'init')))).toEqual(
        shapeOf(detectCluster('auto', containerEnv(pod, 'main'))),
      );
    },
  );
});
