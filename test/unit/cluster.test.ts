import { describe, expect, it } from 'vitest';
import { detectCluster } from '../../src/cluster/schedulers.js';
import { slurmMasterPort } from '../../src/cluster/slurm-master-port.js';
import { ConfigError } from '../../src/errors.js';

/** What sbatch puts in the batch script's environment (one job, 4 nodes). */
const SBATCH = {
  SLURM_JOB_ID: '4242',
  SLURM_JOB_NODELIST: 'gpu[01-04]',
  SLURM_NODELIST: 'gpu[01-04]',
  SLURM_NNODES: '4',
  SLURM_JOB_NUM_NODES: '4',
  SLURM_NODEID: '0',
};

/** What `srun` adds for a step on the last 2 nodes, seen from the second of them. */
const SRUN_STEP = {
  ...SBATCH,
  SLURM_STEP_NODELIST: 'gpu[03-04]',
  SLURM_NODELIST: 'gpu[03-04]',
  SLURM_STEP_NUM_NODES: '2',
  SLURM_NNODES: '2',
  SLURM_NODEID: '1',
};

describe('detectCluster: Slurm', () => {
  it.each([
    [
      'sbatch script, auto',
      'auto',
      SBATCH,
      {
        kind: 'slurm',
        masterHost: 'gpu01',
        masterPort: slurmMasterPort(4242),
        nnodes: 4,
        nodeRank: 0,
        peers: ['gpu01', 'gpu02', 'gpu03', 'gpu04'],
        jobId: '4242',
        nodeName: null,
      },
    ],
    [
      'srun step on part of the allocation: the step view wins',
      'auto',
      SRUN_STEP,
      {
        kind: 'slurm',
        masterHost: 'gpu03',
        masterPort: slurmMasterPort(4242),
        nnodes: 2,
        nodeRank: 1,
        peers: ['gpu03', 'gpu04'],
      },
    ],
    [
      'MASTER_PORT set by the user wins over the derived port',
      'slurm',
      { ...SBATCH, MASTER_PORT: '23456' },
      { masterPort: 23456 },
    ],
    [
      'older Slurm: SLURM_NODELIST and SLURM_JOB_NUM_NODES only',
      'slurm',
      {
        SLURM_JOB_ID: '7',
        SLURM_NODELIST: 'rack[1-2]-n[01-02]',
        SLURM_JOB_NUM_NODES: '4',
        SLURM_NODEID: '3',
      },
      {
        masterHost: 'rack1-n01',
        nnodes: 4,
        nodeRank: 3,
        peers: ['rack1-n01', 'rack1-n02', 'rack2-n01', 'rack2-n02'],
      },
    ],
    [
      'salloc shell on a login node: no node id, count from the list',
      'auto',
      { SLURM_JOB_ID: '9', SLURM_JOB_NODELIST: 'n[8-10]' },
      { masterHost: 'n8', nnodes: 3, nodeRank: null, peers: ['n8', 'n9', 'n10'] },
    ],
    [
      'Slurm wins over Kubernetes in auto',
      'auto',
      { ...SBATCH, KUBERNETES_SERVICE_HOST: '10.0.0.1', MASTER_ADDR: 'elsewhere' },
      { kind: 'slurm', masterHost: 'gpu01' },
    ],
  ])('%s', (_name, mode, env, expected) => {
    expect(detectCluster(mode as 'auto' | 'slurm', env)).toMatchObject(expected);
  });

  it.each([
    ['--cluster slurm outside a job', 'slurm', {}, /--cluster slurm: SLURM_JOB_ID is not set/],
    [
      'a job id that is not a number',
      'auto',
      { ...SBATCH, SLURM_JOB_ID: 'abc' },
      /^SLURM_JOB_ID: bad value 'abc'/,
    ],
    [
      'no node list',
      'auto',
      { SLURM_JOB_ID: '5' },
      /SLURM_JOB_ID is 5 but none of SLURM_STEP_NODELIST, SLURM_JOB_NODELIST, SLURM_NODELIST is set/,
    ],
    [
      'a malformed node list',
      'auto',
      { ...SBATCH, SLURM_JOB_NODELIST: 'gpu[01-04' },
      /^SLURM_JOB_NODELIST: bad value 'gpu\[01-04': '\[' at position 4 .* is never closed/,
    ],
    [
      'an empty list',
      'slurm',
      { SLURM_JOB_ID: '5', SLURM_JOB_NODELIST: ',' },
      /^SLURM_JOB_NODELIST: .*names no host/,
    ],
    [
      'a node count that is not a number',
      'auto',
      { ...SBATCH, SLURM_NNODES: 'four' },
      /^SLURM_NNODES: bad value 'four'/,
    ],
    ['a node count of 0', 'auto', { ...SBATCH, SLURM_NNODES: '0' }, /^SLURM_NNODES: bad value '0'/],
    [
      'a negative node id',
      'auto',
      { ...SBATCH, SLURM_NODEID: '-1' },
      /^SLURM_NODEID: bad value '-1'/,
    ],
    [
      'a node id past the node count',
      'auto',
      { ...SBATCH, SLURM_NODEID: '4' },
      /^SLURM_NODEID: bad value '4': the job has 4 nodes \(SLURM_NNODES\), so it must be 0-3/,
    ],
    [
      'a MASTER_PORT out of range',
      'auto',
      { ...SBATCH, MASTER_PORT: '70000' },
      /^MASTER_PORT: bad value '70000'.*1-65535/,
    ],
  ])('%s → ConfigError', (_name, mode, env, message) => {
    const run = () => detectCluster(mode as 'auto' | 'slurm', env);
    expect(run).toThrow(ConfigError);
    expect(run).toThrow(message);
  });
});

describe('slurmMasterPort', () => {
  it('is the same on every node of a job and differs between neighbouring jobs, probe port included', () => {
    const ports = [1000, 1001, 1002].map(slurmMasterPort);
    expect(ports).toEqual([17000, 17002, 17004]);
    expect(new Set(ports.flatMap((p) => [p, p + 1])).size).toBe(6);
  });

  it('stays in 15000-28999 (unprivileged, below the ephemeral range, clear of 29400/29500) for any id', () => {
    for (const id of [1, 6999, 7000, 13_999, 123_456_789, Number.MAX_SAFE_INTEGER]) {
      const port = slurmMasterPort(id);
      expect(port).toBeGreaterThanOrEqual(15_000);
      expect(port + 1).toBeLessThanOrEqual(28_999);
      expect(port % 2).toBe(0);
    }
  });
});

/**
 * The environment the training operator gives each pod of
 * `pytorchjob "bert"` with 1 master and 3 workers, nprocPerNode 8, port 23456
 * (envvar.go setPodEnv, master.go), plus what Kubernetes gives every pod.
 */
const operatorEnv = (rank: number) => ({
  KUBERNETES_SERVICE_HOST: '10.96.0.1',
  KUBERNETES_SERVICE_PORT: '443',
  PYTHONUNBUFFERED: '0',
  MASTER_PORT: '23456',
  MASTER_ADDR: 'bert-master-0',
  WORLD_SIZE: '32',
  RANK: String(rank),
  PET_NPROC_PER_NODE: '8',
  PET_NODE_RANK: String(rank),
  PET_NNODES: '4',
});
const BERT_PEERS = ['bert-master-0', 'bert-worker-0', 'bert-worker-1', 'bert-worker-2'];

describe('detectCluster: Kubeflow PyTorchJob', () => {
  it.each([
    ['master pod', operatorEnv(0), 0],
    ['first worker pod (worker index 0 is node rank 1)', operatorEnv(1), 1],
    ['last worker pod', operatorEnv(3), 3],
  ])('%s', (_name, env, rank) => {
    expect(detectCluster('auto', env)).toEqual({
      kind: 'k8s',
      masterHost: 'bert-master-0',
      masterPort: 23456,
      nnodes: 4,
      nodeRank: rank,
      peers: BERT_PEERS,
      jobId: null,
      nodeName: null,
      munge: null,
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
      masterHost: 'bert-master-0',
      masterPort: 23456,
      nnodes: 2,
      nodeRank: 1,
      peers: ['bert-master-0', 'bert-worker-0'],
      jobId: null,
      nodeName: null,
      munge: null,
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
      masterHost: null,
      masterPort: null,
      nnodes: null,
      nodeRank: null,
      peers: [],
      jobId: null,
      nodeName: null,
      munge: null,
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
      '--cluster k8s without PyTorchJob variables',
      {},
      /--cluster k8s: none of MASTER_ADDR, PET_NNODES, PET_NODE_RANK, PET_RDZV_ENDPOINT is set/,
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

describe('detectCluster: none', () => {
  it('ignores every variable', () => {
    expect(detectCluster('none', { ...SBATCH, ...operatorEnv(1) })).toBeNull();
  });

  it('auto with nothing set is no cluster', () => {
    expect(detectCluster('auto', {})).toBeNull();
  });
});
