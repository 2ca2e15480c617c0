/**
 * The proof on a real stack (issue 5): real torchrun 1.13 (Debian 12's
 * python3-torch, Gloo) on two namespaced nodes whose hostnames resolve to a
 * 50 Mbit/s management link, with the fast data link named differently on
 * each node and docker0 on both (test/lab/two-node.ts). Launched through
 * bin/nccl-run, which `npm run test:e2e` builds first. Debian 12
 * users run this torch; two-node-torch26.test.ts is the same lab on 2.6,
 * and test/lab/two-node-tier.ts holds what the two check alike.
 *
 * "Went over the data link" is shown three independent ways: bandwidth above
 * what the 50 Mbit/s link can carry, the kernel's byte counters of both
 * links, and the workers' own sockets as `ss -tnp` lists them on the node.
 */
import { expect, it } from 'vitest';
import { workerSocketsWhenReported } from '../lab/observe-job.js';
import { tier } from '../lab/tier.js';
import {
  explainJob,
  type JobSpec,
  parseReport,
  runJob,
  startNode,
  torchUnavailable,
} from '../lab/torch-job.js';
import type { TwoNodeLab } from '../lab/two-node.js';
import {
  DATA_LINK_FLOOR_MB_PER_S,
  expectFailedScriptStatus,
  expectOverDataLink,
  expectSigtermEndsNodeB,
  MANAGEMENT_MB_PER_S,
  startBoth,
  tierJob,
  useTwoNodeLab,
} from '../lab/two-node-tier.js';

tier('real torchrun 1.13 on two nodes through nccl-run', torchUnavailable('1.13'), () => {
  let lab: TwoNodeLab;
  useTwoNodeLab('e2e', (built) => {
    lab = built;
  });

  const ncclRun = (port: number, scriptArgs: string[], extra: Partial<JobSpec> = {}): JobSpec =>
    tierJob('1.13', 'nccl-run', port, { scriptArgs, ...extra });

  it('control: torchrun alone runs Gloo over the management link its hostname resolves to', async () => {
    const { a, b } = startBoth(
      lab,
      tierJob('1.13', 'torchrun', 29510, {
        scriptArgs: ['--mb', '2', '--iters', '1', '--hold', '2'],
      }),
    );
    const sockets = await workerSocketsWhenReported(lab, a.all, 'A');
    const [ra, rb] = await Promise.all([a, b]);

    expect([ra.exitCode, rb.exitCode]).toEqual([0, 0]);
    const report = parseReport(String(ra.all));
    expect(report?.torch).toMatch(/^1\.13\./);
    expect(report?.glooSocketIfname).toBeNull();
    expect(report?.mbPerSecond).toBeLessThan(MANAGEMENT_MB_PER_S);
    expect(sockets.some((s) => s.local.startsWith('203.0.113.'))).toBe(true);
  });

  it('completes the all-reduce over the data link, each node on its own interface name', async () => {
    await expectOverDataLink(lab, ncclRun(29520, ['--mb', '16', '--iters', '3', '--hold', '2']));
  });

  it('completes over the data link with the c10d rendezvous backend', async () => {
    const result = await runJob(
      lab,
      ncclRun(29530, ['--mb', '8', '--iters', '2'], { rendezvous: 'c10d' }),
    );

    expect(result.exitCodes, result.output.A + result.output.B).toEqual({ A: 0, B: 0 });
    expect(result.report?.glooSocketIfname).toBe('ens3f0');
    expect(result.output.B).toMatch(/enp65s0/);
    expect(result.report?.mbPerSecond).toBeGreaterThan(DATA_LINK_FLOOR_MB_PER_S);
    // nccl-run exports PET_LOCAL_ADDR, which torchrun 1.13 has no option
    // for (run.py defines no --local_addr): its rank-0 agent still hands the
    // workers its FQDN (elastic/agent/server/api.py _set_master_addr_port,
    // _get_fq_hostname), the name the hostname resolves by.
    expect(result.report?.masterAddr).toBe('nodeA');
  });

  it('c10d endpoint given as a name for A’s management address: torch 1.13 hosts no store, nccl-run says so', async () => {
    // The name resolves to what the hostname does, but 1.13 compares a name
    // only with the hostname and its canonical name (utils.py
    // _matches_machine_hostname); 2.x hosts here (the 2.6 tier shows it).
    lab.setExtraHosts([`${lab.a.mgmtAddress} trainer-0-mgmt`]);
    const spec = (launcher: JobSpec['launcher']): JobSpec =>
      tierJob('1.13', launcher, 29535, {
        rendezvous: 'c10d',
        endpointHost: 'trainer-0-mgmt',
        isHostOnA: false,
        // Each client gives up on the store after 5 s (c10d_rendezvous_backend.py
        // _create_tcp_store read_timeout) instead of 60.
        torchrunOptions: ['--rdzv_conf', 'read_timeout=5'],
        scriptArgs: ['--mb', '1', '--iters', '1'],
        timeoutMs: 60_000,
      });
    const alone = await runJob(lab, spec('torchrun'));
    expect(alone.exitCodes).toEqual({ A: 1, B: 1 });
    expect(alone.output.A).toMatch(/The connection to the C10d store has failed/);

    const explained = await explainJob(lab, 'A', spec('nccl-run'));
    expect(explained.warnings).toContainEqual(
      expect.stringMatching(
        /^the c10d endpoint trainer-0-mgmt resolves to this node's address 203\.0\.113\.1, .*torch 1\.13\S* .*add --rdzv-conf is_host=1 on this node$/,
      ),
    );
  });

  it('a worker node started before the master waits for it, then joins', async () => {
    const job = ncclRun(29540, ['--mb', '1', '--iters', '1']);
    const b = startNode(lab, 'B', job);
    // torchrun on the master binds its store 2-3 s after it starts here;
    // with a 6 s head start nccl-run on B finds nothing listening at first.
    await new Promise((resolve) => setTimeout(resolve, 6_000));
    const a = startNode(lab, 'A', job);
    const [ra, rb] = await Promise.all([a, b]);

    expect([ra.exitCode, rb.exitCode], String(ra.all) + String(rb.all)).toEqual([0, 0]);
    expect(parseReport(String(ra.all))?.ranks).toBe(2);
    expect(String(rb.all)).toMatch(/waiting for 198\.18\.10\.1:29540 via enp65s0/);
  });

  it('SIGTERM to nccl-run ends that node’s torchrun and workers, with torchrun’s status', async () => {
    await expectSigtermEndsNodeB(
      lab,
      ncclRun(29550, ['--mb', '1', '--iters', '1', '--hold', '60']),
      // torchrun replaced nccl-run (exec): no Node process is left on the node.
      { running: ['torchrun', 'python3.11'], between: ['node'] },
    );
  });

  it('a training script that fails: nccl-run exits with torchrun’s status', async () => {
    await expectFailedScriptStatus(
      lab,
      ncclRun(29560, ['--mb', '1', '--iters', '1', '--exit-code', '3']),
    );
  });
});
