/**
 * The lab of two-node-torchrun.test.ts with the torch the product is about:
 * torchrun 2.6 (Debian 13's python3-torch, Gloo) inside the lab's Debian 13
 * root on both nodes (test/lab/torch-job.ts, torchrun-in-root.sh), nccl-run
 * on the host side in front of it. Hostnames resolve to the 50 Mbit/s
 * management link, the data link is named differently on each node, docker0
 * is on both (test/lab/two-node.ts); what the two tiers check alike is in
 * test/lab/two-node-tier.ts.
 *
 * Besides the data path (bandwidth far above the management link, the
 * kernel's byte counters) this tier checks what 2.x does differently from
 * 1.13: the MASTER_ADDR its c10d rendezvous hands the workers (PET_LOCAL_ADDR),
 * and its store-host rule for an endpoint given as a name.
 */
import { expect, it } from 'vitest';
import { txCounters } from '../lab/observe-job.js';
import { tier } from '../lab/tier.js';
import { type JobSpec, runJob, torchUnavailable } from '../lab/torch-job.js';
import type { TwoNodeLab } from '../lab/two-node.js';
import {
  DATA_LINK_FLOOR_MB_PER_S,
  expectFailedScriptStatus,
  expectOverDataLink,
  expectSigtermEndsNodeB,
  expectSingleExecutableInRoot,
  MANAGEMENT_MB_PER_S,
  MB,
  tierJob,
  useTwoNodeLab,
} from '../lab/two-node-tier.js';

tier('real torchrun 2.6 on two nodes through nccl-run', torchUnavailable('2.6'), () => {
  let lab: TwoNodeLab;
  useTwoNodeLab('t26', (built) => {
    lab = built;
  });

  const job = (launcher: JobSpec['launcher'], port: number, extra: Partial<JobSpec> = {}) =>
    tierJob('2.6', launcher, port, extra);

  it('control: torchrun 2.6 alone runs Gloo over the management link its hostname resolves to', async () => {
    const result = await runJob(
      lab,
      job('torchrun', 29610, { scriptArgs: ['--mb', '2', '--iters', '1'] }),
    );

    expect(result.exitCodes, result.output.A + result.output.B).toEqual({ A: 0, B: 0 });
    expect(result.report?.torch).toMatch(/^2\.6\./);
    expect(result.report?.glooSocketIfname).toBeNull();
    expect(result.report?.mbPerSecond).toBeLessThan(MANAGEMENT_MB_PER_S);
  });

  it('the single executable inside the root, which has no Node.js: the data link, as the shell entry', async () => {
    await expectSingleExecutableInRoot(lab, '2.6', 29625);
  });

  it('static: the all-reduce crosses the data link, each node on its own interface name', async () => {
    const report = await expectOverDataLink(
      lab,
      job('nccl-run', 29620, { scriptArgs: ['--mb', '16', '--iters', '3', '--hold', '2'] }),
    );
    // The static backend hands the workers --master-addr as given
    // (static_tcp_rendezvous.py next_rendezvous: RendezvousStoreInfo(master_addr, ...)).
    expect(report?.masterAddr).toBe(lab.a.dataAddress);
  });

  it('c10d: the data link, and the workers get the chosen address as MASTER_ADDR, not rank 0’s FQDN', async () => {
    const txBefore = await txCounters(lab);
    const result = await runJob(lab, job('nccl-run', 29630, { rendezvous: 'c10d' }));
    const txAfter = await txCounters(lab);

    expect(result.exitCodes, result.output.A + result.output.B).toEqual({ A: 0, B: 0 });
    expect(result.report?.torch).toMatch(/^2\.6\./);
    expect(result.report?.glooSocketIfname).toBe('ens3f0');
    expect(result.output.B).toMatch(/enp65s0/);
    expect(result.report?.mbPerSecond).toBeGreaterThan(DATA_LINK_FLOOR_MB_PER_S);
    expect(txAfter.A.data - txBefore.A.data).toBeGreaterThan(2 * 8 * MB);
    // PET_LOCAL_ADDR is torchrun 2.6's --local-addr: the rendezvous' rank 0
    // (A: node descriptors sort by address, dynamic_rendezvous.py
    // _mark_rendezvous_complete) publishes it as MASTER_ADDR
    // (rendezvous/api.py RendezvousStoreInfo.build).
    expect(result.report?.masterAddr).toBe(lab.a.dataAddress);
    for (const node of ['A', 'B'] as const) {
      expect(result.output[node]).toMatch(
        new RegExp(`PET_LOCAL_ADDR=${lab.node(node).dataAddress.replaceAll('.', '\\.')}`),
      );
    }
  });
  it('c10d control: without PET_LOCAL_ADDR, torch 2.6 gives the workers rank 0’s FQDN, a management name', async () => {
    const result = await runJob(lab, job('hand-set', 29640, { rendezvous: 'c10d' }));

    expect(result.exitCodes, result.output.A + result.output.B).toEqual({ A: 0, B: 0 });
    // `local_addr or socket.getfqdn()` (rendezvous/api.py RendezvousStoreInfo.build):
    // nodeA, which resolves to the 50 Mbit/s link.
    expect(result.report?.masterAddr).toBe(lab.a.hostname);
  });

  it('c10d endpoint given as a name for A’s data address: torch 2.6 hosts no store there, nccl-run says so', async () => {
    lab.setExtraHosts([`${lab.a.dataAddress} trainer-0-data`]);
    // torch's own verdict first: torchrun alone, each client giving up on the
    // store after 5 s (c10d_rendezvous_backend.py _create_tcp_store read_timeout).
    const alone = await runJob(
      lab,
      job('hand-set', 29650, {
        rendezvous: 'c10d',
        endpointHost: 'trainer-0-data',
        isHostOnA: false,
        torchrunOptions: ['--rdzv-conf', 'read_timeout=5'],
      }),
    );
    expect(alone.exitCodes).toEqual({ A: 1, B: 1 });
    expect(alone.output.A).toMatch(/The connection to the C10d store has failed/);

    // nccl-run: A is no store host by torch's rule, so it checks the store
    // as a client does and fails, after the warning that names the fix.
    const checked = await runJob(
      lab,
      job('nccl-run', 29660, {
        rendezvous: 'c10d',
        endpointHost: 'trainer-0-data',
        isHostOnA: false,
        ncclRunArgs: ['--log-format', 'json', '--verify-timeout', '3s'],
      }),
    );
    expect(checked.exitCodes.A, checked.output.A).toBe(75);
    expect(checked.output.A).toMatch(
      /the c10d endpoint trainer-0-data resolves to this node's address 198\.18\.10\.1.*--rdzv-conf is_host=1/,
    );

    const fixed = await runJob(
      lab,
      job('nccl-run', 29670, { rendezvous: 'c10d', endpointHost: 'trainer-0-data' }),
    );
    expect(fixed.exitCodes, fixed.output.A + fixed.output.B).toEqual({ A: 0, B: 0 });
    expect(fixed.output.A).not.toMatch(/c10d endpoint/);
    expect(fixed.report?.mbPerSecond).toBeGreaterThan(DATA_LINK_FLOOR_MB_PER_S);
  });

  it('c10d endpoint given as a name for A’s management address: torch 2.6 hosts there by address, and the unknown-torch warning names what 1.13 does instead', async () => {
    // The name is not the hostname, but resolves to what the hostname does:
    // 2.x compares the two names' addresses (utils.py _matches_machine_hostname,
    // `addr_info[4][0] in host_ip_list`), 1.13 does not (the 1.13 tier shows it).
    lab.setExtraHosts([`${lab.a.mgmtAddress} trainer-0-mgmt`]);
    const result = await runJob(
      lab,
      job('nccl-run', 29675, {
        rendezvous: 'c10d',
        endpointHost: 'trainer-0-mgmt',
        isHostOnA: false,
        scriptArgs: ['--mb', '1', '--iters', '1'],
      }),
    );

    expect(result.exitCodes, result.output.A + result.output.B).toEqual({ A: 0, B: 0 });
    expect(result.report?.ranks).toBe(2);
    // The launcher is a shell script nccl-run cannot see into, so the torch is
    // unknown: the newest rule decides, and the one unknown-torch warning says
    // what 1.13 would do instead and how to declare the torch.
    expect(result.output.A).toMatch(
      /the torch behind .*torchrun-in-root\.sh .* is unknown .* torch 1\.13 would host the c10d store on no node \(add --rdzv-conf is_host=1 on this node\); say which torch it is with --torch-version/,
    );
  });

  it('a training script that fails: nccl-run exits with torchrun 2.6’s status', async () => {
    await expectFailedScriptStatus(
      lab,
      job('nccl-run', 29680, { scriptArgs: ['--mb', '1', '--iters', '1', '--exit-code', '3'] }),
    );
  });

  it('SIGTERM to nccl-run ends that node’s torchrun 2.6 and workers, with torchrun’s status', async () => {
    await expectSigtermEndsNodeB(
      lab,
      job('nccl-run', 29690, { scriptArgs: ['--mb', '1', '--iters', '1', '--hold', '60'] }),
      // The root's torchrun and its python3.13 workers: nccl-run and every
      // step of the launcher exec'd, so no Node, shell or unshare is left.
      // torchrun 2.x names its main thread, which /proc/PID/comm shows
      // (run.py run: torch.multiprocessing._set_thread_name("pt_elastic")).
      { running: ['pt_elastic', 'python3.13'], between: ['node', 'sh', 'unshare', 'chroot'] },
    );
  });
});
