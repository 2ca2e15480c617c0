import { describe, expect, it } from 'vitest';
import { detectCluster } from '../../../src/cluster/schedulers.js';
import { ConfigError } from '../../../src/errors.js';
import { readJobShape } from '../../../src/job/read-job-shape.js';
import { operatorEnv, TRAINJOB_PEERS, trainJobEnv } from '../../fixtures/cluster-env.js';

const TRAINJOB = 'Kubeflow Trainer TrainJob (JobSet)';

describe('detectCluster: Kubeflow Trainer v2 TrainJob', () => {
  it.each([
    ['the master pod (node 0)', 0],
    ['the last node', 3],
  ])('%s', (_name, rank) => {
    expect(detectCluster('auto', trainJobEnv(rank))).toEqual({
      kind: 'k8s',
      controller: TRAINJOB,
      variables: [
        'PET_MASTER_ADDR',
        'PET_MASTER_PORT',
        'PET_NNODES',
        'PET_NODE_RANK',
        'PET_NPROC_PER_NODE',
        'JOB_COMPLETION_INDEX',
      ],
      masterHost: 'bert-node-0-0.bert',
      masterPort: 29500,
      nnodes: 4,
      nodeRank: rank,
      peers: TRAINJOB_PEERS,
      jobId: null,
      nodeName: null,
      munge: null,
      namesComeLate: true,
    });
  });

  it('torchrun reads every PET_* itself: nothing is filled in, and explain names the controller', () => {
    const env = trainJobEnv(1);
    const job = readJobShape(['train.py'], env, detectCluster('auto', env));
    expect(job).toMatchObject({
      master: { host: 'bert-node-0-0.bert', port: 29500, origin: { name: 'PET_MASTER_ADDR' } },
      nnodes: { max: 4, origin: { name: 'PET_NNODES' } },
      nodeRank: { value: 1, origin: { name: 'PET_NODE_RANK' } },
      fill: {},
      clusterPeers: TRAINJOB_PEERS,
      cluster: 'k8s',
      controller: { name: TRAINJOB },
    });
  });

  it('an init container named in envInjection sees the same variables: the same job', () => {
    // torch.go hands init containers petEnvs and masterEnvVars alike; the
    // Job controller gives them JOB_COMPLETION_INDEX; HOSTNAME is the pod's.
    expect(detectCluster('k8s', trainJobEnv(2))).toMatchObject({
      controller: TRAINJOB,
      nodeRank: 2,
    });
  });

  it('torchtune: no PET_MASTER_* (the endpoint is on the command line); the hostname names the TrainJob', () => {
    const { PET_MASTER_ADDR: _a, PET_MASTER_PORT: _p, ...env } = trainJobEnv(1);
    expect(detectCluster('auto', env)).toMatchObject({
      controller: TRAINJOB,
      masterHost: null,
      masterPort: null,
      nnodes: 4,
      nodeRank: 1,
      peers: TRAINJOB_PEERS,
    });
  });

  it('PET_NODE_RANK comes from the same annotation as JOB_COMPLETION_INDEX: without it, the index', () => {
    const { PET_NODE_RANK: _r, ...env } = trainJobEnv(3);
    expect(detectCluster('auto', env)).toMatchObject({ controller: TRAINJOB, nodeRank: 3 });
  });

  it('is not taken for a v1 PyTorchJob, nor a v1 pod for it', () => {
    expect(detectCluster('auto', trainJobEnv(0))?.controller).toBe(TRAINJOB);
    expect(detectCluster('auto', operatorEnv(1))?.controller).toBe(
      'Kubeflow PyTorchJob (training-operator v1)',
    );
  });

  it('a master name not of the trainer shape (a JobSet template of its own) is no TrainJob', () => {
    const env = { ...trainJobEnv(1), PET_MASTER_ADDR: 'bert-node-0-0.other' };
    expect(detectCluster('auto', env)?.controller).toBe('JobSet (Indexed Jobs)');
  });

  it.each([
    ['a bad PET_NNODES', { PET_NNODES: 'four' }, /^PET_NNODES: bad value 'four'/],
    ['a bad PET_MASTER_PORT', { PET_MASTER_PORT: '70000' }, /^PET_MASTER_PORT: bad value '70000'/],
    [
      'a node rank past the count',
      { PET_NODE_RANK: '4' },
      /^PET_NODE_RANK: bad value '4': the TrainJob has 4 nodes \(PET_NNODES\), so it must be 0-3/,
    ],
  ])('%s → ConfigError', (_name, change, message) => {
    const run = () => detectCluster('auto', { ...trainJobEnv(0), ...change });
    expect(run).toThrow(ConfigError);
    expect(run).toThrow(message);
  });
});

describe("detectCluster: a TrainJob's pre-flight on Trainer before v2.3.0 (no PET_MASTER_*)", () => {
  /** The init container of `nccl-run init k8s`: the label's name, the index, PET_NNODES. */
  const preflightEnv = (rank: number) => ({
    KUBERNETES_SERVICE_HOST: '10.96.0.1',
    HOSTNAME: `bert-node-0-${rank}`,
    PET_NNODES: '4',
    PET_NODE_RANK: String(rank),
    TRAINJOB_NAME: 'bert',
    JOB_COMPLETION_INDEX: String(rank),
  });

  it('derives the master the torch plugin names, <trainjob>-node-0-0.<trainjob>:29500', () => {
    expect(detectCluster('auto', preflightEnv(2))).toMatchObject({
      controller: TRAINJOB,
      masterHost: 'bert-node-0-0.bert',
      masterPort: 29500,
      nnodes: 4,
      nodeRank: 2,
      peers: TRAINJOB_PEERS,
    });
  });

  it("the torch plugin's PET_MASTER_* win where v2.3.0's envInjection sets them", () => {
    const env = {
      ...preflightEnv(1),
      PET_MASTER_ADDR: 'bert-node-0-0.bert',
      PET_MASTER_PORT: '29400',
    };
    expect(detectCluster('auto', env)).toMatchObject({ masterPort: 29400 });
  });

  it('a TRAINJOB_NAME that is no DNS label → ConfigError naming it and the label', () => {
    const run = () => detectCluster('auto', { ...preflightEnv(0), TRAINJOB_NAME: 'Bert_1' });
    expect(run).toThrow(ConfigError);
    expect(run).toThrow(
      "TRAINJOB_NAME: bad value 'Bert_1': expected the TrainJob's name, from the pod's label jobset.sigs.k8s.io/jobset-name",
    );
  });
});
