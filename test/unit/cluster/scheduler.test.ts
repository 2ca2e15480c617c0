/**
 * How a scheduler plugs in (cluster/schedulers.ts): a module exporting a
 * `Scheduler`, and its line in SCHEDULERS. This sketch of PBS stays in the
 * tests because no PBS runs in the lab to check it against (LAB.md): it
 * reads the real file PBS_NODEFILE names, as PBS Pro and Torque write it
 * (a host per line, once per slot), with PBS_NODENUM as pbsdsh sets it.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ClusterInfo, Scheduler } from '../../../src/cluster/scheduler.js';
import { detectCluster, SCHEDULERS } from '../../../src/cluster/schedulers.js';
import { readJobShape } from '../../../src/job/read-job-shape.js';

const pbs: Scheduler = {
  name: 'pbs',
  detects: (env) => env.PBS_NODEFILE !== undefined,
  read(env): ClusterInfo {
    const hosts = readFileSync(env.PBS_NODEFILE as string, 'utf8')
      .split('\n')
      .filter(Boolean);
    const peers = [...new Set(hosts)];
    return {
      kind: 'pbs',
      controller: 'PBS',
      variables: ['PBS_NODEFILE', 'PBS_NODENUM', 'PBS_JOBID'],
      masterHost: peers[0] ?? null,
      masterPort: null,
      nnodes: peers.length,
      nodeRank: env.PBS_NODENUM === undefined ? null : Number(env.PBS_NODENUM),
      peers,
      jobId: env.PBS_JOBID ?? null,
      nodeName: null,
      munge: null,
      namesComeLate: false,
    };
  },
};

describe('a scheduler is one module behind one interface', () => {
  const dir = mkdtempSync(join(tmpdir(), 'nccl-run-pbs-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const nodefile = join(dir, 'nodefile');
  writeFileSync(nodefile, 'cn07\ncn07\ncn08\ncn08\ncn09\ncn09\n');
  const env = { PBS_NODEFILE: nodefile, PBS_JOBID: '1234.pbs01', PBS_NODENUM: '2' };
  const schedulers = [...SCHEDULERS, pbs];

  it('is found by --cluster auto and by its name', () => {
    const expected = {
      kind: 'pbs',
      masterHost: 'cn07',
      nnodes: 3,
      nodeRank: 2,
      jobId: '1234.pbs01',
    };
    expect(detectCluster('auto', env, schedulers)).toMatchObject(expected);
    expect(detectCluster('pbs', env, schedulers)).toMatchObject(expected);
    expect(detectCluster('auto', env)).toBeNull();
  });

  it('fills in the job as Slurm does', () => {
    const job = readJobShape(['train.py'], env, detectCluster('auto', env, schedulers));
    expect(job).toMatchObject({
      master: { host: 'cn07', port: 29500 },
      fill: { PET_MASTER_ADDR: 'cn07', PET_NNODES: '3', PET_NODE_RANK: '2' },
      clusterPeers: ['cn07', 'cn08', 'cn09'],
      cluster: 'pbs',
      jobId: '1234.pbs01',
    });
  });
});
