import { describe, expect, it } from 'vitest';
import { detectCluster } from '../../../src/cluster/schedulers.js';
import { readJobShape } from '../../../src/job/read-job-shape.js';
import { jobSetEnv } from '../../fixtures/cluster-env.js';

describe('detectCluster: a plain JobSet', () => {
  it("JobSet's PyTorch example: MASTER_ADDR, MASTER_PORT and RANK from its template; the node count is torchrun's", () => {
    expect(detectCluster('auto', jobSetEnv(2))).toEqual({
      kind: 'k8s',
      controller: 'JobSet (Indexed Jobs)',
      variables: ['MASTER_ADDR', 'MASTER_PORT', 'RANK', 'JOB_COMPLETION_INDEX'],
      masterHost: 'pytorch-workers-0-0.pytorch',
      masterPort: 3389,
      nnodes: null,
      nodeRank: 2,
      peers: [],
      jobId: null,
      nodeName: null,
      munge: null,
      namesComeLate: true,
    });
  });

  it('the job runs as the example writes it: --nnodes on the command line, the rest filled in', () => {
    const env = jobSetEnv(3);
    const job = readJobShape(['--nnodes=4', 'mnist.py'], env, detectCluster('auto', env));
    expect(job).toMatchObject({
      master: { host: 'pytorch-workers-0-0.pytorch', port: 3389 },
      fill: { PET_MASTER_ADDR: 'pytorch-workers-0-0.pytorch', PET_NODE_RANK: '3' },
      controller: { name: 'JobSet (Indexed Jobs)' },
    });
  });

  it('with PET_NPROC_PER_NODE, RANK and WORLD_SIZE count processes and are not read', () => {
    const env = { ...jobSetEnv(1), RANK: '9', WORLD_SIZE: '16', PET_NPROC_PER_NODE: '8' };
    expect(detectCluster('auto', env)).toMatchObject({ nnodes: null, nodeRank: null });
  });

  it('an Indexed Job with nothing of torchrun in it is no job of nccl-run', () => {
    expect(
      detectCluster('auto', { KUBERNETES_SERVICE_HOST: '10.96.0.1', JOB_COMPLETION_INDEX: '0' }),
    ).toBeNull();
  });

  it('a node rank past WORLD_SIZE (pods) is a ConfigError naming RANK', () => {
    expect(() => detectCluster('auto', { ...jobSetEnv(0), RANK: '4', WORLD_SIZE: '4' })).toThrow(
      /^RANK: bad value '4': the job has 4 nodes \(WORLD_SIZE\), so it must be 0-3/,
    );
  });
});
