/**
 * What a LeaderWorkerSet tells its pods (kubernetes-sigs/lws v0.8.0:
 * pkg/utils/pod/pod_utils.go `AddLWSVariables`, api/leaderworkerset/v1
 * constants). Every container of every pod of a group, init containers
 * too, gets
 *   LWS_LEADER_ADDRESS=<lws>-<group>.<subdomain>.<namespace>   the leader pod's DNS name
 *   LWS_GROUP_SIZE=<leaderWorkerTemplate.size>                 pods in the group, leader included
 *   LWS_WORKER_INDEX=<0 on the leader, 1..size-1 on workers>
 * The workers are a StatefulSet named after the leader pod whose ordinals
 * start at 1 (pkg/controllers/pod_controller.go), so worker i is
 * `<lws>-<group>-<i>`, in the leader's subdomain. A group is one torchrun
 * job: the leader is its master, the group size its node count, the worker
 * index its node rank. torchrun reads none of these, so nccl-run exports
 * them as PET_MASTER_ADDR, PET_NNODES and PET_NODE_RANK; the port is
 * torchrun's own (29500) unless the template says otherwise.
 */
import { badValue } from '../errors.js';
import { readEnvInteger } from './env-integer.js';
import { type ClusterInfo, isSet, type PodController, setVariables } from './scheduler.js';

const MAX_NODES = 65_536;
const READ = ['LWS_LEADER_ADDRESS', 'LWS_GROUP_SIZE', 'LWS_WORKER_INDEX'];

export const leaderWorkerSet = {
  name: 'LeaderWorkerSet',
  recognizes: (env) => isSet(env.LWS_LEADER_ADDRESS),
  read: fromLeaderWorkerSet,
} as const satisfies PodController;

function fromLeaderWorkerSet(env: NodeJS.ProcessEnv): ClusterInfo {
  const leader = env.LWS_LEADER_ADDRESS?.trim() || null;
  const size = readEnvInteger(env, 'LWS_GROUP_SIZE', 1, MAX_NODES);
  const index = readEnvInteger(env, 'LWS_WORKER_INDEX', 0, MAX_NODES - 1);
  if (index !== null && size !== null && index >= size) {
    throw badValue(
      { name: 'LWS_WORKER_INDEX', from: 'env' },
      String(index),
      `the group has ${size} pods (LWS_GROUP_SIZE), so it must be 0-${size - 1}`,
    );
  }
  return {
    kind: 'k8s',
    controller: leaderWorkerSet.name,
    variables: setVariables(env, READ),
    masterHost: leader,
    masterPort: null,
    nnodes: size,
    nodeRank: index,
    peers: groupPods(leader, size),
    jobId: null,
    nodeName: null,
    munge: null,
    namesComeLate: true,
  };
}

/** The leader, then worker i as `<leader pod>-<i>` in the leader's domain. */
function groupPods(leader: string | null, size: number | null): string[] {
  if (leader === null || size === null) return [];
  const dot = leader.indexOf('.');
  const [pod, domain] = dot === -1 ? [leader, ''] : [leader.slice(0, dot), leader.slice(dot)];
  return [leader, ...Array.from({ length: size - 1 }, (_, i) => `${pod}-${i + 1}${domain}`)];
}
