/**
 * A LeaderWorkerSet group's pods as the LWS controller and its pod webhook
 * make them (kubernetes-sigs/lws v0.8.0), for `podman kube play`:
 * - pkg/controllers: the leader StatefulSet `<lws>` gives group g the pod
 *   `<lws>-<g>`; that pod's workers are the StatefulSet `<lws>-<g>` with
 *   ordinals from 1, pods `<lws>-<g>-<i>`; all behind the headless Service
 *   `<lws>` (the subdomain); no leaderTemplate: the workerTemplate for both;
 * - pkg/utils/pod/pod_utils.go `AddLWSVariables`, in every container and
 *   init container: LWS_LEADER_ADDRESS=<lws>-<g>.<subdomain>.<namespace>,
 *   LWS_GROUP_SIZE=<size>, LWS_WORKER_INDEX=<0 on the leader, i on worker i>;
 * - labels leaderworkerset.sigs.k8s.io/name, group-index, worker-index, the
 *   size annotation.
 * A StatefulSet's pods restart Always. As for a TrainJob, the pod is named
 * after its DNS name in the lab (aardvark-dns answers it), its hostname
 * after the pod.
 */
import { parse } from 'yaml';
import { type Container, type JobPod, jobPod } from './pytorchjob-pods.js';

export interface LeaderWorkerSet {
  metadata: { name: string };
  spec: {
    replicas?: number;
    leaderWorkerTemplate: {
      size: number;
      workerTemplate: {
        metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
        spec: { initContainers?: Container[]; containers: Container[]; [key: string]: unknown };
      };
    };
  };
}

export function parseLeaderWorkerSet(text: string): LeaderWorkerSet {
  const doc = parse(text) as LeaderWorkerSet & { kind?: string };
  if (doc.kind !== 'LeaderWorkerSet') throw new Error('not a LeaderWorkerSet');
  return doc;
}

/** Group `group`'s pods, leader first, in `namespace`. */
export function expandLeaderWorkerSet(
  lws: LeaderWorkerSet,
  group = 0,
  namespace = 'default',
): JobPod[] {
  const name = lws.metadata.name;
  const { size, workerTemplate } = lws.spec.leaderWorkerTemplate;
  const leader = `${name}-${group}`;
  const domain = `${name}.${namespace}`;
  return Array.from({ length: size }, (_, index) => {
    const template = structuredClone(workerTemplate);
    const podName = index === 0 ? leader : `${leader}-${index}`;
    const lwsEnv = [
      { name: 'LWS_LEADER_ADDRESS', value: `${leader}.${domain}` },
      { name: 'LWS_GROUP_SIZE', value: String(size) },
      { name: 'LWS_WORKER_INDEX', value: String(index) },
    ];
    for (const container of [...(template.spec.initContainers ?? []), ...template.spec.containers])
      container.env = [...lwsEnv, ...(container.env ?? [])];
    return jobPod(
      `${podName}.${domain}`,
      index === 0 ? 'master' : 'worker',
      index,
      {
        labels: {
          ...template.metadata?.labels,
          'leaderworkerset.sigs.k8s.io/name': name,
          'leaderworkerset.sigs.k8s.io/group-index': String(group),
          'leaderworkerset.sigs.k8s.io/worker-index': String(index),
        },
        annotations: {
          ...template.metadata?.annotations,
          'leaderworkerset.sigs.k8s.io/size': String(size),
        },
      },
      { ...template.spec, hostname: podName, subdomain: name, restartPolicy: 'Always' },
    );
  });
}
