/**
 * What `explain` says about a pod's controller (SPEC "Cluster fill-in":
 * explain names the controller and the variables read), through the built
 * CLI, on a Kubernetes node's facts (--facts). The environments are the
 * controllers' own (test/fixtures/cluster-env.ts, read at their tags).
 * Nothing connects anywhere: --verify none.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { lwsEnv, trainJobEnv } from '../fixtures/cluster-env.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const bin = join(root, 'bin/nccl-run');
const facts = join(root, 'test/fixtures/facts/k8s-node.json');

const explain = (env: Record<string, string>, json: boolean) =>
  execa(
    bin,
    ['explain', '--facts', facts, '--verify', 'none', ...(json ? ['--json'] : []), 'train.py'],
    {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root', ...env },
      extendEnv: false,
      reject: false,
    },
  );

describe('explain names the controller it read', () => {
  it('a LeaderWorkerSet pod: LWS_* become the PET_* torchrun reads, and the Cluster line says whence', async () => {
    // The leader's address stands in for its DNS name, which no DNS answers here.
    const env = { ...lwsEnv(1), LWS_LEADER_ADDRESS: '198.18.20.1' };
    const text = await explain(env, false);
    expect(text.exitCode).toBe(0);
    expect(text.stdout).toContain(
      'Cluster    LeaderWorkerSet, read from LWS_LEADER_ADDRESS, LWS_GROUP_SIZE, LWS_WORKER_INDEX',
    );
    const json = JSON.parse((await explain(env, true)).stdout);
    expect(json.job).toMatchObject({
      cluster: 'k8s',
      controller: {
        name: 'LeaderWorkerSet',
        variables: ['LWS_LEADER_ADDRESS', 'LWS_GROUP_SIZE', 'LWS_WORKER_INDEX'],
      },
      nnodes: { min: 4, max: 4 },
      nodeRank: { value: 1 },
    });
    expect(json.env).toMatchObject({
      PET_MASTER_ADDR: '198.18.20.1',
      PET_NNODES: '4',
      PET_NODE_RANK: '1',
    });
    // LWS gives no port: torchrun's own default, which it needs no variable for.
    expect(json.master).toMatchObject({ port: 29500 });
    expect(json.env).not.toHaveProperty('PET_MASTER_PORT');
  });

  it('a TrainJob pod whose master has no DNS record: 68 under --verify none (nothing waits), and the report still names the TrainJob', async () => {
    const result = await explain(trainJobEnv(2), true);
    expect(result.exitCode).toBe(68);
    const json = JSON.parse(result.stdout);
    expect(json.job.controller).toEqual({
      name: 'Kubeflow Trainer TrainJob (JobSet)',
      variables: [
        'PET_MASTER_ADDR',
        'PET_MASTER_PORT',
        'PET_NNODES',
        'PET_NODE_RANK',
        'PET_NPROC_PER_NODE',
        'JOB_COMPLETION_INDEX',
      ],
    });
    expect(json.error.message).toMatch(/^master 'bert-node-0-0\.bert' does not resolve/);
  });
});
