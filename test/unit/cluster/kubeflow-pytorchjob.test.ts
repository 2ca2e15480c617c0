import { describe, expect, it } from 'vitest';
import { detectCluster } from '../../../src/cluster/schedulers.js';
import { ConfigError } from '../../../src/errors.js';
import { BERT_PEERS, operatorEnv } from '../../fixtures/cluster-env.js';

describe('detectCluster: Kubeflow PyTorchJob', () => {
  it.each([
    ['master pod', operatorEnv(0), 0],
    ['first worker pod (worker index 0 is node rank 1)', operatorEnv(1), 1],
    ['last worker pod', operatorEnv(3), 3],
  ])('%s', (_name, env, rank) => {
    expect(detectCluster('auto', env)).toEqual({
      kind: 'k8s',
      controller: 'Kubeflow PyTorchJob (training-operator v1)',
      variables: [
        'MASTER_ADDR',
        'MASTER_PORT',
        'PET_NNODES',
        'PET_NODE_RANK',
        'PET_NPROC_PER_NODE',
        'WORLD_SIZE',
        'RANK',
      ],
      masterHost: 'bert-master-0',
      masterPort: 23456,
      nnodes: 4,
      nodeRank: rank,
      peers: BERT_PEERS,
      jobId: null,
      nodeName: null,
      munge: null,
      namesComeLate: true,
    });
  });

  it('an operator before PET_NNODES: WORLD_SIZE and RANK count pods', () => {
    const env = {
      KUBERNETES_SERVICE_HOST: '10.96.0.1',
      MASTER_ADDR: 'bert-master-0',
      MASTER_PORT: '23456',
      WORLD_SIZE: '2',
      RANK: '1',
    };
    expect(detectCluster('auto', env)).toEqual({
      kind: 'k8s',
      controller: 'Kubeflow PyTorchJob (training-operator v1)',
      variables: ['MASTER_ADDR', 'MASTER_PORT', 'WORLD_SIZE', 'RANK'],
      masterHost: 'bert-master-0',
      masterPort: 23456,
      nnodes: 2,
      nodeRank: 1,
      peers: ['bert-master-0', 'bert-worker-0'],
      jobId: null,
      nodeName: null,
      munge: null,
      namesComeLate: true,
    });
  });

  it('with PET_NPROC_PER_NODE, WORLD_SIZE counts processes and is not read as a node count', () => {
    const { PET_NNODES: _n, PET_NODE_RANK: _r, ...env } = operatorEnv(2);
    expect(detectCluster('auto', env)).toMatchObject({ nnodes: null, nodeRank: null, peers: [] });
  });

  it('elastic policy: MIN:MAX and the rendezvous endpoint are left to torchrun', () => {
    const env = {
      KUBERNETES_SERVICE_HOST: '10.96.0.1',
      PET_RDZV_ENDPOINT: 'bert-worker-0:23456',
      PET_RDZV_BACKEND: 'c10d',
      PET_NNODES: '1:3',
      PET_NPROC_PER_NODE: '8',
      PET_MAX_RESTARTS: '3',
    };
    expect(detectCluster('auto', env)).toEqual({
      kind: 'k8s',
      controller: 'Kubeflow PyTorchJob (training-operator v1)',
      variables: ['PET_NNODES', 'PET_NPROC_PER_NODE'],
      masterHost: null,
      masterPort: null,
      nnodes: null,
      nodeRank: null,
      peers: [],
      jobId: null,
      nodeName: null,
      munge: null,
      namesComeLate: true,
    });
  });

  it('a pod that is not a PyTorchJob is no cluster in auto', () => {
    expect(
      detectCluster('auto', { KUBERNETES_SERVICE_HOST: '10.96.0.1', HOSTNAME: 'web-1' }),
    ).toBeNull();
  });

  it('MASTER_ADDR outside Kubernetes is no cluster in auto (plain torchrun env)', () => {
    expect(detectCluster('auto', { MASTER_ADDR: '198.18.0.1', MASTER_PORT: '29500' })).toBeNull();
  });

  it('a master name not of the operator shape gives no peers', () => {
    expect(detectCluster('k8s', { ...operatorEnv(0), MASTER_ADDR: '198.18.0.1' })).toMatchObject({
      peers: [],
    });
  });

  it.each([
    [
      "--cluster k8s without any controller's variables",
      {},
      /^--cluster k8s: this pod shows no controller nccl-run reads \(.*LWS_LEADER_ADDRESS.*MASTER_ADDR, PET_NNODES, PET_NODE_RANK, PET_RDZV_ENDPOINT: none is set\); use --cluster auto or none$/,
    ],
    ['a bad PET_NNODES', { ...operatorEnv(0), PET_NNODES: 'x' }, /^PET_NNODES: bad value 'x'/],
    ['a bad MASTER_PORT', { ...operatorEnv(0), MASTER_PORT: '0' }, /^MASTER_PORT: bad value '0'/],
    [
      'a node rank past the count',
      { ...operatorEnv(0), PET_NODE_RANK: '4' },
      /^PET_NODE_RANK: bad value '4': the job has 4 nodes/,
    ],
  ])('%s → ConfigError', (_name, env, message) => {
    const run = () => detectCluster('k8s', env);
    expect(run).toThrow(ConfigError);
    expect(run).toThrow(message);
  });
});

describe("detectCluster: a PyTorchJob's pre-flight (the operator sets nothing in init containers)", () => {
  /** The init container of `nccl-run init pytorchjob`: the pod's labels and PET_NNODES. */
  const preflightEnv = (type: string, index: number) => ({
    KUBERNETES_SERVICE_HOST: '10.96.0.1',
    PET_NNODES: '4',
    PYTORCHJOB_NAME: 'bert',
    PYTORCHJOB_REPLICA_TYPE: type,
    PYTORCHJOB_REPLICA_INDEX: String(index),
  });

  it.each([
    ['master', 0, 0],
    ['worker', 0, 1],
    ['worker', 2, 3],
  ])('%s %i: node rank %i, master <job>-master-0 (envvar.go)', (type, index, rank) => {
    expect(detectCluster('auto', preflightEnv(type, index))).toMatchObject({
      controller: 'Kubeflow PyTorchJob (training-operator v1)',
      masterHost: 'bert-master-0',
      nnodes: 4,
      nodeRank: rank,
      peers: ['bert-master-0', 'bert-worker-0', 'bert-worker-1', 'bert-worker-2'],
    });
  });

  it('a replica type other than master or worker → ConfigError naming the label', () => {
    const run = () => detectCluster('auto', preflightEnv('launcher', 0));
    expect(run).toThrow(
      "PYTORCHJOB_REPLICA_TYPE: bad value 'launcher': expected master or worker, the pod's label training.kubeflow.org/replica-type",
    );
  });
});
