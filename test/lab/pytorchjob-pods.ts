/**
 * A PyTorchJob's pods as Kubeflow's training operator makes them, for
 * `podman kube play` (no operator or kubelet runs here). Checked against
 * kubeflow/training-operator v1.8.1 (commit 0f8735fa),
 * pkg/controller.v1/pytorch/envvar.go and master.go; v1.7.0 sets the same
 * variables (PET_NPROC_PER_NODE there only in jobs with a Master). For replica type T (master, worker) and index i, the pod is
 * named `<job>-T-i` (replicaName) and the operator appends to every
 * container's env:
 *
 *   PYTHONUNBUFFERED=1
 *   MASTER_PORT, PET_MASTER_PORT   the Master's `pytorchjob-port` containerPort
 *                                  of the container named `pytorch`
 *   MASTER_ADDR, PET_MASTER_ADDR   <job>-master-0
 *   WORLD_SIZE                     all replicas × nprocPerNode (1 if not a number)
 *   RANK, PET_NODE_RANK            i on the master, i + 1 on a worker
 *   PET_NPROC_PER_NODE             spec.nprocPerNode, when set
 *   PET_NNODES                     all replicas (no elasticPolicy)
 *
 * Init containers get none of it (setPodEnv: containers only; still so at
 * v1.9.4); the template's pre-flight reads the labels below instead. On
 * Worker pods the operator appends its own init container, init-pytorch,
 * an nslookup loop for the master's name (initcontainer.go), which the lab
 * leaves out: podman's DNS answers the master's pod name as soon as it runs.
 *
 * The operator also makes a headless Service per pod, of the pod's name;
 * podman's DNS (aardvark-dns on the pod network) answers pod names, which
 * stands in for it. A replica's restartPolicy becomes the pod's. What a lab
 * needs beyond that (fewer processes, no GPU, a fixture script) is the
 * test's business: `expandPyTorchJob` takes the job as written.
 */
import { parse, stringify } from 'yaml';

/** A container's variable: a value, or (before kubelet resolves it) a downward-API field. */
export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { fieldRef?: { fieldPath: string }; [key: string]: unknown };
}

/** The parts of a container spec this file reads or writes; the rest travels as is. */
export interface Container {
  name: string;
  env?: EnvVar[];
  ports?: { name?: string; containerPort: number }[];
  [key: string]: unknown;
}

interface PodTemplate {
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: { containers: Container[]; [key: string]: unknown };
}

interface ReplicaSpec {
  replicas?: number;
  restartPolicy?: string;
  template: PodTemplate;
}

export interface PyTorchJob {
  metadata: { name: string };
  spec: {
    nprocPerNode?: string;
    elasticPolicy?: unknown;
    pytorchReplicaSpecs: { Master?: ReplicaSpec; Worker?: ReplicaSpec };
  };
}

/** One pod the operator would create: its name and its manifest (a plain object; `podYaml` writes it). */
export interface JobPod {
  name: string;
  replicaType: 'master' | 'worker';
  index: number;
  manifest: {
    apiVersion: 'v1';
    kind: 'Pod';
    metadata: {
      name: string;
      labels: Record<string, string>;
      annotations?: Record<string, string>;
    };
    spec: { containers: Container[]; restartPolicy?: string; [key: string]: unknown };
  };
}

/**
 * A controller's pod as the lab plays it: its DNS name, role, index, and the
 * Pod manifest, its downward-API variables resolved as kubelet would.
 */
export function jobPod(
  name: string,
  replicaType: JobPod['replicaType'],
  index: number,
  metadata: Omit<JobPod['manifest']['metadata'], 'name'>,
  spec: JobPod['manifest']['spec'],
): JobPod {
  const full = { name, ...metadata };
  const initContainers = (spec.initContainers ?? []) as Container[];
  for (const container of [...initContainers, ...spec.containers]) {
    if (container.env !== undefined) container.env = container.env.map((v) => resolved(v, full));
  }
  return {
    name,
    replicaType,
    index,
    manifest: { apiVersion: 'v1', kind: 'Pod', metadata: full, spec },
  };
}

/**
 * kubelet's downward API for a variable (pkg/kubelet/kubelet_pods.go
 * podFieldSelectorRuntimeValue, pkg/fieldpath ExtractFieldPathAsString):
 * `kube play` honours fieldRef to metadata.name only (LAB.md), so the lab
 * writes the label's or annotation's value in. A key the pod lacks resolves
 * to "" in kubelet; here it is an error, as a template that asks for a label
 * no controller sets is one.
 */
function resolved(variable: EnvVar, metadata: JobPod['manifest']['metadata']): EnvVar {
  const path = variable.valueFrom?.fieldRef?.fieldPath;
  if (path === undefined) return variable;
  // kube play resolves the pod's name itself.
  if (path === 'metadata.name') return variable;
  const match = /^metadata\.(labels|annotations)\['([^']+)'\]$/.exec(path);
  if (match === null) throw new Error(`the lab resolves no fieldRef ${path}`);
  const value = metadata[match[1] as 'labels' | 'annotations']?.[match[2] as string];
  if (value === undefined) throw new Error(`${variable.name}: the pod has no ${path}`);
  return { name: variable.name, value };
}

/** The PyTorchJob document of a YAML file (YAML anchors resolved). */
export function parsePyTorchJob(text: string): PyTorchJob {
  const job = parse(text) as PyTorchJob;
  if ((job as { kind?: string }).kind !== 'PyTorchJob') throw new Error('not a PyTorchJob');
  return job;
}

const clone = <T>(value: T): T => structuredClone(value);

/** The Master's `pytorchjob-port` in its `pytorch` container, as getPortFromPyTorchJob finds it. */
function masterPort(job: PyTorchJob): number {
  const master = job.spec.pytorchReplicaSpecs.Master;
  for (const container of master?.template.spec.containers ?? [])
    if (container.name === 'pytorch')
      for (const port of container.ports ?? [])
        if (port.name === 'pytorchjob-port') return port.containerPort;
  throw new Error('port not found (the Master has no pytorchjob-port on its pytorch container)');
}

/** Every pod of the job, master first, as the operator (v1.8.1) creates them. */
export function expandPyTorchJob(job: PyTorchJob): JobPod[] {
  const { name: jobName } = job.metadata;
  const specs = job.spec.pytorchReplicaSpecs;
  if (specs.Master === undefined) throw new Error('this lab expands jobs with a Master only');
  if (job.spec.elasticPolicy !== undefined) throw new Error('elastic jobs are not expanded here');
  const totalReplicas = (specs.Master.replicas ?? 1) + (specs.Worker?.replicas ?? 0);
  const nproc = Number.parseInt(job.spec.nprocPerNode ?? '', 10);
  const worldSize = totalReplicas * (Number.isNaN(nproc) ? 1 : nproc);
  const port = String(masterPort(job));
  const masterAddr = `${jobName}-master-0`;

  const pods: JobPod[] = [];
  for (const [type, spec] of [
    ['master', specs.Master],
    ['worker', specs.Worker],
  ] as const) {
    if (spec === undefined) continue;
    for (let index = 0; index < (spec.replicas ?? 1); index += 1) {
      const rank = String(type === 'worker' ? index + 1 : index);
      const template = clone(spec.template);
      const injected = [
        { name: 'PYTHONUNBUFFERED', value: '1' },
        { name: 'MASTER_PORT', value: port },
        { name: 'PET_MASTER_PORT', value: port },
        { name: 'MASTER_ADDR', value: masterAddr },
        { name: 'PET_MASTER_ADDR', value: masterAddr },
        { name: 'WORLD_SIZE', value: String(worldSize) },
        { name: 'RANK', value: rank },
        { name: 'PET_NODE_RANK', value: rank },
        ...(job.spec.nprocPerNode === undefined
          ? []
          : [{ name: 'PET_NPROC_PER_NODE', value: job.spec.nprocPerNode }]),
        { name: 'PET_NNODES', value: String(totalReplicas) },
      ];
      for (const container of template.spec.containers)
        container.env = [...(container.env ?? []), ...injected];
      const name = `${jobName}-${type}-${index}`;
      pods.push(
        jobPod(
          name,
          type,
          index,
          {
            labels: {
              ...template.metadata?.labels,
              'training.kubeflow.org/job-name': jobName,
              'training.kubeflow.org/replica-type': type,
              'training.kubeflow.org/replica-index': String(index),
            },
            ...(template.metadata?.annotations === undefined
              ? {}
              : { annotations: template.metadata.annotations }),
          },
          {
            ...template.spec,
            ...(spec.restartPolicy === undefined ? {} : { restartPolicy: spec.restartPolicy }),
          },
        ),
      );
    }
  }
  return pods;
}

/** The pod's manifest as YAML, for `podman kube play`. */
export function podYaml(pod: JobPod): string {
  return stringify(pod.manifest);
}
