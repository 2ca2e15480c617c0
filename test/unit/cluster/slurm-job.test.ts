import { describe, expect, it } from 'vitest';
import { detectCluster } from '../../../src/cluster/schedulers.js';
import { slurmMasterPort } from '../../../src/cluster/slurm-master-port.js';
import { ConfigError } from '../../../src/errors.js';
import { SBATCH, SRUN_STEP } from '../../fixtures/cluster-env.js';

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
