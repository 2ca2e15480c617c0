import { describe, expect, it } from 'vitest';
import { detectCluster } from '../../../src/cluster/schedulers.js';
import { ConfigError } from '../../../src/errors.js';
import { readJobShape } from '../../../src/job/read-job-shape.js';
import { LWS_PEERS, lwsEnv } from '../../fixtures/cluster-env.js';

describe('detectCluster: LeaderWorkerSet', () => {
  it.each([
    ['the leader', 0],
    ['a worker', 2],
  ])(
    '%s: the leader is the master, the group size the node count, the worker index the rank',
    (_name, worker) => {
      expect(detectCluster('auto', lwsEnv(worker))).toEqual({
        kind: 'k8s',
        controller: 'LeaderWorkerSet',
        variables: ['LWS_LEADER_ADDRESS', 'LWS_GROUP_SIZE', 'LWS_WORKER_INDEX'],
        masterHost: 'vllm-0.vllm.ml',
        masterPort: null,
        nnodes: 4,
        nodeRank: worker,
        peers: LWS_PEERS,
        jobId: null,
        nodeName: null,
        munge: null,
        namesComeLate: true,
      });
    },
  );

  it('torchrun reads none of LWS_*: nccl-run exports them as PET_*, on torchrun default port', () => {
    const env = lwsEnv(3);
    const job = readJobShape(['train.py'], env, detectCluster('auto', env));
    expect(job).toMatchObject({
      master: { host: 'vllm-0.vllm.ml', port: 29500 },
      fill: { PET_MASTER_ADDR: 'vllm-0.vllm.ml', PET_NNODES: '4', PET_NODE_RANK: '3' },
      cluster: 'k8s',
      controller: {
        name: 'LeaderWorkerSet',
        variables: ['LWS_LEADER_ADDRESS', 'LWS_GROUP_SIZE', 'LWS_WORKER_INDEX'],
      },
    });
  });

  it("torchrun's own arguments win over the group's", () => {
    const env = lwsEnv(1);
    const job = readJobShape(
      ['--nnodes=2', '--node_rank=1', '--master_port=23456', 'train.py'],
      env,
      detectCluster('auto', env),
    );
    expect(job).toMatchObject({
      master: { host: 'vllm-0.vllm.ml', port: 23456 },
      fill: { PET_MASTER_ADDR: 'vllm-0.vllm.ml' },
    });
    expect(job.fill).not.toHaveProperty('PET_NNODES');
  });

  it('auto needs the pod (KUBERNETES_SERVICE_HOST); --cluster k8s reads the group without it', () => {
    const { KUBERNETES_SERVICE_HOST: _host, ...env } = lwsEnv(2);
    expect(detectCluster('auto', env)).toBeNull();
    expect(detectCluster('k8s', env)).toMatchObject({ controller: 'LeaderWorkerSet', nodeRank: 2 });
  });

  it('a leader address without a domain still lists the group', () => {
    expect(
      detectCluster('auto', { ...lwsEnv(0), LWS_LEADER_ADDRESS: 'vllm-1', LWS_GROUP_SIZE: '2' }),
    ).toMatchObject({ peers: ['vllm-1', 'vllm-1-1'] });
  });

  it.each([
    ['a bad LWS_GROUP_SIZE', { LWS_GROUP_SIZE: '0' }, /^LWS_GROUP_SIZE: bad value '0'/],
    [
      'a worker index past the group',
      { LWS_WORKER_INDEX: '4' },
      /^LWS_WORKER_INDEX: bad value '4': the group has 4 pods \(LWS_GROUP_SIZE\), so it must be 0-3/,
    ],
  ])('%s → ConfigError', (_name, change, message) => {
    const run = () => detectCluster('auto', { ...lwsEnv(0), ...change });
    expect(run).toThrow(ConfigError);
    expect(run).toThrow(message);
  });
});
