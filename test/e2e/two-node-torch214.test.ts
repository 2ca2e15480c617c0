/**
 * The two-node lab of two-node-torch26.test.ts with the newest stack (issue
 * 20): torchrun 2.14.1 (Debian sid's python3-torch, Python 3.14, Gloo) inside
 * the lab's sid root on both nodes, nccl-run on the host side in front of it.
 * Hostnames resolve to the 50 Mbit/s management link, the data link is named
 * differently on each node (test/lab/two-node.ts). torch 2.14 still needs
 * the lab's libuv workaround (debian-root.ts torch26Env).
 */
import { expect, it } from 'vitest';
import { txCounters } from '../lab/observe-job.js';
import { tier } from '../lab/tier.js';
import { type JobSpec, runJob, torchUnavailable } from '../lab/torch-job.js';
import type { TwoNodeLab } from '../lab/two-node.js';
import {
  DATA_LINK_FLOOR_MB_PER_S,
  expectOverDataLink,
  expectSingleExecutableInRoot,
  MANAGEMENT_MB_PER_S,
  MB,
  tierJob,
  useTwoNodeLab,
} from '../lab/two-node-tier.js';

tier('real torchrun 2.14 on two nodes through nccl-run', torchUnavailable('2.14'), () => {
  let lab: TwoNodeLab;
  useTwoNodeLab('t214', (built) => {
    lab = built;
  });

  const job = (launcher: JobSpec['launcher'], port: number, extra: Partial<JobSpec> = {}) =>
    tierJob('2.14', launcher, port, extra);

  it('control: torchrun 2.14 alone runs Gloo over the management link its hostname resolves to', async () => {
    const result = await runJob(
      lab,
      job('torchrun', 29710, { scriptArgs: ['--mb', '2', '--iters', '1'] }),
    );

    expect(result.exitCodes, result.output.A + result.output.B).toEqual({ A: 0, B: 0 });
    expect(result.report?.torch).toMatch(/^2\.14\./);
    expect(result.report?.glooSocketIfname).toBeNull();
    expect(result.report?.mbPerSecond).toBeLessThan(MANAGEMENT_MB_PER_S);
  });

  it('the single executable inside the root, which has no Node.js: the data link, as the shell entry', async () => {
    await expectSingleExecutableInRoot(lab, '2.14', 29725);
  });

  it('static: the all-reduce crosses the data link, each node on its own interface name', async () => {
    const report = await expectOverDataLink(
      lab,
      job('nccl-run', 29720, { scriptArgs: ['--mb', '16', '--iters', '3', '--hold', '2'] }),
    );
    expect(report?.torch).toMatch(/^2\.14\./);
    expect(report?.masterAddr).toBe(lab.a.dataAddress);
  });

  it('c10d: the data link, and the workers get the chosen address as MASTER_ADDR', async () => {
    const txBefore = await txCounters(lab);
    const result = await runJob(lab, job('nccl-run', 29730, { rendezvous: 'c10d' }));
    const txAfter = await txCounters(lab);

    expect(result.exitCodes, result.output.A + result.output.B).toEqual({ A: 0, B: 0 });
    expect(result.report?.torch).toMatch(/^2\.14\./);
    expect(result.report?.glooSocketIfname).toBe('ens3f0');
    expect(result.report?.mbPerSecond).toBeGreaterThan(DATA_LINK_FLOOR_MB_PER_S);
    expect(txAfter.A.data - txBefore.A.data).toBeGreaterThan(2 * 8 * MB);
    expect(result.report?.masterAddr).toBe(lab.a.dataAddress);
  });
});
