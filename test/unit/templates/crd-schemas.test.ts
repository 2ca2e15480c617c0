/**
 * Every Kubernetes template against the CRDs of the releases it names,
 * fetched at their tags (test/fixtures/crds/README.md): nothing rejected,
 * and no field that a lax client would prune (test/lab/crd-schema.ts).
 * With and without --port-range, whose sysctl lands in the pod spec the
 * CRDs embed whole (no x-kubernetes-preserve-unknown-fields in any of them,
 * so the core Pod schema is checked as part of each CRD).
 */
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { templateText } from '../../../src/templates/init.js';
import { withPortRange } from '../../../src/templates/port-range.js';
import type { TemplateName } from '../../../src/templates/shipped-files.js';
import { type CrdCheck, crdCheck, describeErrors } from '../../lab/crd-schema.js';

// biome-ignore lint/suspicious/noExplicitAny: parsed YAML, changed field by field in the controls
type Doc = any;

const trainer = (tag: string, plural: string) =>
  crdCheck(`kubeflow-trainer-${tag}/trainer.kubeflow.org_${plural}.yaml`, 'v1alpha1');
/**
 * The JobSet each Trainer release embeds as the runtime's template (its
 * go.mod: sigs.k8s.io/jobset v0.8.2 at v2.0.1, v0.12.0 at v2.3.0).
 */
const jobSet = (tag: string) => crdCheck(`jobset-${tag}/jobset.x-k8s.io_jobsets.yaml`, 'v1alpha2');
const lws = (tag: string) =>
  crdCheck(`lws-${tag}/leaderworkerset.x-k8s.io_leaderworkersets.yaml`, 'v1');
const pytorchJob = crdCheck('kubeflow-trainer-v1.9.4/kubeflow.org_pytorchjobs.yaml', 'v1');

const TRAINER = {
  'v2.0.1': {
    runtime: trainer('v2.0.1', 'trainingruntimes'),
    clusterRuntime: trainer('v2.0.1', 'clustertrainingruntimes'),
    job: trainer('v2.0.1', 'trainjobs'),
    jobSet: jobSet('v0.8.2'),
  },
  'v2.3.0': {
    runtime: trainer('v2.3.0', 'trainingruntimes'),
    clusterRuntime: trainer('v2.3.0', 'clustertrainingruntimes'),
    job: trainer('v2.3.0', 'trainjobs'),
    jobSet: jobSet('v0.12.0'),
  },
};
const LWS = { 'v0.6.3': lws('v0.6.3'), 'v0.10.0': lws('v0.10.0') };

const docsOf = (name: TemplateName, portRange: boolean): Doc[] => {
  const text = templateText(name);
  const written = portRange ? withPortRange(name, text, { low: 50_000, high: 51_000 }) : text;
  return parseAllDocuments(written).map((doc) => doc.toJS());
};

function expectAccepted(check: CrdCheck, document: Doc) {
  expect(document.apiVersion).toBe(check.apiVersion);
  expect(document.kind).toBe(check.kind);
  expect(describeErrors(check.errors(document))).toEqual([]);
}

/** The runtime's JobSet template as the JobSet it becomes. */
const asJobSet = (runtime: Doc) => ({
  apiVersion: 'jobset.x-k8s.io/v1alpha2',
  kind: 'JobSet',
  metadata: { name: 'train' },
  spec: runtime.spec.template.spec,
});

describe.each([false, true])('the templates (--port-range: %s)', (portRange) => {
  describe.each(Object.entries(TRAINER))('k8s on Kubeflow Trainer %s', (_tag, crds) => {
    const [runtime, job] = docsOf('k8s', portRange);

    it('the TrainingRuntime', () => expectAccepted(crds.runtime, runtime));
    it('the TrainJob', () => expectAccepted(crds.job, job));
    it('the runtime as a ClusterTrainingRuntime (the same spec)', () =>
      expectAccepted(crds.clusterRuntime, { ...runtime, kind: 'ClusterTrainingRuntime' }));
    it("the runtime's template as the JobSet of that release", () =>
      expectAccepted(crds.jobSet, asJobSet(runtime)));
  });

  it('pytorchjob on the training operator v1.9.4', () => {
    const [job] = docsOf('pytorchjob', portRange);
    expectAccepted(pytorchJob, job);
  });

  it.each(Object.entries(LWS))('lws on LeaderWorkerSet %s', (_tag, crd) => {
    const [set] = docsOf('lws', portRange);
    expectAccepted(crd, set);
  });
});

describe('the checks can fail: what the releases differ in, and a typo', () => {
  it('mlPolicy.torch.envInjection: an unknown field on Trainer v2.0.1 (pruned or rejected), known on v2.3.0', () => {
    const [runtime] = docsOf('k8s', false);
    runtime.spec.mlPolicy.torch.envInjection = {
      targets: [{ jobName: 'node', containerNames: ['nccl-run'] }],
    };
    expect(describeErrors(TRAINER['v2.0.1'].runtime.errors(runtime))).toEqual([
      '/spec/mlPolicy/torch: unknown field envInjection (pruned, or rejected by strict validation)',
    ]);
    expect(TRAINER['v2.3.0'].runtime.errors(runtime)).toEqual([]);
  });

  it('restartPolicy RecreateGroupAfterStart: only from lws v0.9.0 (v0.10.0 here)', () => {
    const [set] = docsOf('lws', false);
    set.spec.leaderWorkerTemplate.restartPolicy = 'RecreateGroupAfterStart';
    expect(describeErrors(LWS['v0.6.3'].errors(set))).toEqual([
      '/spec/leaderWorkerTemplate/restartPolicy: must be equal to one of the allowed values',
    ]);
    expect(LWS['v0.10.0'].errors(set)).toEqual([]);
  });

  it('a misspelt pod field deep in the embedded pod spec, and a string where a number goes', () => {
    const [job] = docsOf('pytorchjob', true);
    // One pod template for Master and Worker (a YAML anchor): both carry the mistakes.
    const pod = job.spec.pytorchReplicaSpecs.Worker.template.spec;
    pod.securityContext.sysctl = pod.securityContext.sysctls;
    pod.containers[0].ports[0].containerPort = '23456';
    expect(describeErrors(pytorchJob.errors(job))).toEqual(
      ['Master', 'Worker'].flatMap((role) => [
        `/spec/pytorchReplicaSpecs/${role}/template/spec/containers/0/ports/0/containerPort: must be integer`,
        `/spec/pytorchReplicaSpecs/${role}/template/spec/securityContext: unknown field sysctl (pruned, or rejected by strict validation)`,
      ]),
    );
  });

  it('the runtime torch.numProcPerNode that v2.0.1 had and v2.3.0 dropped', () => {
    const [runtime] = docsOf('k8s', false);
    runtime.spec.mlPolicy.torch = { numProcPerNode: 'auto' };
    expect(TRAINER['v2.0.1'].runtime.errors(runtime)).toEqual([]);
    expect(describeErrors(TRAINER['v2.3.0'].runtime.errors(runtime))).toEqual([
      '/spec/mlPolicy/torch: unknown field numProcPerNode (pruned, or rejected by strict validation)',
    ]);
  });
});

/**
 * The CEL rules (x-kubernetes-validations) ajv cannot run, read at the tags
 * and written here as JavaScript, keyed by their text: every rule a
 * template's document reaches must be one of these (a rule new in a fixture
 * fails until someone reads it), and each must hold. Transition rules
 * (oldSelf) apply to updates, not to the create that `kubectl apply` does.
 */
// biome-ignore lint/suspicious/noExplicitAny: a CEL rule's self is any JSON value
type Rule = (self: any) => boolean;
const CEL: Record<string, Rule> = {
  // trainer v2.3.0 trainingruntime_types.go MLPolicy
  '[has(self.torch), has(self.mpi), has(self.jax), has(self.xgboost),has(self.flux)].filter(x, x).size() <= 1':
    (self) => ['torch', 'mpi', 'jax', 'xgboost', 'flux'].filter((k) => k in self).length <= 1,
  // trainer v2.0.1 trainingruntime_types.go MLPolicy
  '!(has(self.numNodes) && (has(self.torch) && has(self.torch.elasticPolicy)))': (self) =>
    !('numNodes' in self && 'torch' in self && 'elasticPolicy' in self.torch),
  '!(has(self.torch) && has(self.mpi))': (self) => !('torch' in self && 'mpi' in self),
  // jobset_types.go (embedded in the runtimes)
  "!(has(self.startupPolicy) && self.startupPolicy.startupPolicyOrder == 'InOrder' && self.replicatedJobs.exists(x, has(x.dependsOn)))":
    (self) =>
      !(
        self.startupPolicy?.startupPolicyOrder === 'InOrder' &&
        self.replicatedJobs.some((job: { dependsOn?: unknown }) => 'dependsOn' in job)
      ),
  // trainer v2.3.0 trainjob_types.go TrainJob
  "self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')": (self) =>
    /^[a-z]([-a-z0-9]*[a-z0-9])?$/.test(self.metadata.name),
  'size(self.metadata.name) <= 63': (self) => self.metadata.name.length <= 63,
};

/** The values at a celRules path (`.spec.mlPolicy`, `.a.b[].c`, `.`) in a document. */
function valuesAt(document: Doc, path: string): Doc[] {
  let values: Doc[] = [document];
  for (const step of path.split('.').filter(Boolean)) {
    const list = step.endsWith('[]');
    const key = list ? step.slice(0, -2) : step;
    values = values.flatMap((value) => {
      const next = value?.[key];
      if (next === undefined) return [];
      return list ? (next as Doc[]) : [next];
    });
  }
  return values;
}

describe('CEL rules the documents reach (not run by ajv): each read at its tag and held', () => {
  const cases: [string, CrdCheck, Doc][] = [];
  for (const [tag, crds] of Object.entries(TRAINER)) {
    const [runtime, job] = docsOf('k8s', true);
    cases.push([`runtime ${tag}`, crds.runtime, runtime]);
    cases.push([`TrainJob ${tag}`, crds.job, job]);
    cases.push([`JobSet of ${tag}`, crds.jobSet, asJobSet(runtime)]);
  }
  for (const [tag, crd] of Object.entries(LWS))
    cases.push([`lws ${tag}`, crd, docsOf('lws', true)[0]]);
  cases.push(['pytorchjob v1.9.4', pytorchJob, docsOf('pytorchjob', true)[0]]);

  it.each(cases)('%s', (_name, check, document) => {
    const reached = check.celRules.filter(
      ({ path, rule }) => !rule.includes('oldSelf') && valuesAt(document, path).length > 0,
    );
    for (const { path, rule } of reached) {
      const holds = CEL[rule.replace(/\s+/g, ' ').trim()];
      expect(holds, `a CEL rule at ${path} not read yet: ${rule}`).toBeDefined();
      for (const self of valuesAt(document, path))
        expect(holds?.(self), `${path}: ${rule}`).toBe(true);
    }
  });
});
