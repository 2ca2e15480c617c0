/**
 * The lab of two-node-torchrun.test.ts with the torch the product is about:
 * torchrun 2.6 (Debian 13's python3-torch, Gloo) inside the lab's Debian 13
 * root on both nodes (test/lab/torch-job.ts, torchrun-in-root.sh), nccl-run
 * on the host side in front of it. Hostnames resolve to the 50 Mbit/s
 * management link, the data link is named differently on each node, docker0
 * is on both (test/lab/two-node.ts).
 *
 * Besides the data path (bandwidth far above the management link, the
 * kernel's byte counters) this tier checks what 2.x does differently from
 * 1.13: the MASTER_ADDR its c10d rendezvous hands the workers (PET_LOCAL_ADDR),
 * and its store-host rule for an endpoint given as a name.
 */
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import {
  outputMatches,
  processNames,
  txCounters,
  workerSocketsWhenReported,
} from '../lab/observe-job.js';
import { tier } from '../lab/tier.js';
import {
  type JobSpec,
  parseReport,
  runJob,
  startNode,
  torchUnavailable,
} from '../lab/torch-job.js';
import { cleanupOnSignal, MANAGEMENT_RATE_MBIT, TwoNodeLab } from '../lab/two-node.js';

/** The most a 50 Mbit/s link can carry, in MB/s (10^6 bytes). */
const MANAGEMENT_MB_PER_S = MANAGEMENT_RATE_MBIT / 8;
/** Above this the all-reduce cannot have crossed the management link. */
const DATA_LINK_FLOOR_MB_PER_S = 4 * MANAGEMENT_MB_PER_S;
const MB = 1_000_000;

tier('real torchrun 2.6 on two nodes through nccl-run', torchUnavailable('2.6'), () => {
  let lab: TwoNodeLab;
  let removeSignalHandlers = () => {};

  beforeAll(async () => {
    lab = await TwoNodeLab.create('t26');
    // Ctrl-C on a test run reaches this worker too; afterAll would not run then.
    removeSignalHandlers = cleanupOnSignal(lab);
  });
  afterEach(async () => {
    // A test that abandons a node on purpose leaves its peer waiting; the
    // next job must start on quiet nodes with the plain /etc/hosts.
    lab?.setExtraHosts([]);
    await lab?.stopProcesses();
  });
  afterAll(async () => {
    removeSignalHandlers();
    await lab?.cleanup();
  });

  const job = (launcher: JobSpec['launcher'], port: number, extra: Partial<JobSpec> = {}) =>
    ({
      torch: '2.6',
      launcher,
      rendezvous: 'static',
      port,
      scriptArgs: ['--mb', '8', '--iters', '2'],
      ncclRunArgs: ['--log-format', 'json', '--verify-timeout', '60s'],
      timeoutMs: 90_000,
      ...extra,
    }) satisfies JobSpec;

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

  it('static: the all-reduce crosses the data link, each node on its own interface name', async () => {
    const txBefore = await txCounters(lab);
    const spec = job('nccl-run', 29620, {
      scriptArgs: ['--mb', '16', '--iters', '3', '--hold', '2'],
    });
    const a = startNode(lab, 'A', spec);
    const b = startNode(lab, 'B', spec);
    const sockets = await workerSocketsWhenReported(lab, a.all, 'A');
    const [ra, rb] = await Promise.all([a, b]);
    const txAfter = await txCounters(lab);

    expect([ra.exitCode, rb.exitCode], String(ra.all) + String(rb.all)).toEqual([0, 0]);
    const report = parseReport(String(ra.all));
    expect(report).toMatchObject({ ranks: 2, torch: expect.stringMatching(/^2\.6\./) });
    expect(report?.glooSocketIfname).toBe('ens3f0');
    expect(String(rb.all)).toMatch(/enp65s0/);
    expect(report?.mbPerSecond).toBeGreaterThan(DATA_LINK_FLOOR_MB_PER_S);
    // The static backend hands the workers --master-addr as given
    // (static_tcp_rendezvous.py next_rendezvous: RendezvousStoreInfo(master_addr, ...)).
    expect(report?.masterAddr).toBe(lab.a.dataAddress);

    // Two ranks in a ring: each iteration sends the whole tensor from each rank.
    expect(txAfter.A.data - txBefore.A.data).toBeGreaterThan(3 * 16 * MB);
    expect(txAfter.A.mgmt - txBefore.A.mgmt).toBeLessThan(1 * MB);
    expect(txAfter.B.mgmt - txBefore.B.mgmt).toBeLessThan(1 * MB);
    const gloo = sockets.filter((s) => !s.peer.endsWith(':29620') && !s.local.endsWith(':29620'));
    expect(gloo.length).toBeGreaterThan(0);
    for (const socket of gloo) {
      expect(socket.local).toMatch(/^198\.18\.10\.1:/);
      expect(socket.peer).toMatch(/^198\.18\.10\.2:/);
    }
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

  it('c10d endpoint given as a name for A’s management address: torch 2.6 hosts there by address, nccl-run warns for 1.13 only', async () => {
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
    expect(result.output.A).toMatch(
      /the c10d endpoint trainer-0-mgmt resolves to this node's address 203\.0\.113\.1, one its hostname nodeA resolves to: torch 2\.x hosts the store here, but torch 1\.13 .*--rdzv-conf is_host=1/,
    );
  });

  it('a training script that fails: nccl-run exits with torchrun 2.6’s status', async () => {
    const spec = job('nccl-run', 29680, {
      scriptArgs: ['--mb', '1', '--iters', '1', '--exit-code', '3'],
    });
    const a = startNode(lab, 'A', spec);
    const b = startNode(lab, 'B', spec);
    const ra = await a;

    // torchrun reports the rank's own code and itself exits 1 on a failed
    // worker (ChildFailedError raised out of torch/distributed/run.py main).
    expect(String(ra.all)).toMatch(/exitcode\s*:\s*3/);
    expect(ra.exitCode).toBe(1);
    await lab.stopProcesses();
    await b;
  });

  it('SIGTERM to nccl-run ends that node’s torchrun 2.6 and workers, with torchrun’s status', async () => {
    const spec = job('nccl-run', 29690, {
      scriptArgs: ['--mb', '1', '--iters', '1', '--hold', '60'],
    });
    const a = startNode(lab, 'A', spec);
    const b = startNode(lab, 'B', spec);
    await outputMatches(a.all, /\{"ranks"/, 60_000);
    // The root's torchrun and its python3.13 workers: nccl-run and every
    // step of the launcher exec'd, so no Node, shell or unshare is left.
    // torchrun 2.x names its main thread, which /proc/PID/comm shows
    // (run.py run: torch.multiprocessing._set_thread_name("pt_elastic")).
    const before = await processNames(lab, 'B');
    expect(before).toEqual(expect.arrayContaining(['pt_elastic', 'python3.13']));
    for (const between of ['node', 'sh', 'unshare', 'chroot'])
      expect(before).not.toContain(between);

    b.kill('SIGTERM');
    const rb = await b;

    // torch 2.6's agent, as 1.13's, turns SIGTERM into SignalException,
    // stops its workers and exits 1 (elastic/multiprocessing/api.py
    // _terminate_process_handler); nccl-run passes that status through.
    expect(rb.exitCode, String(rb.all)).toBe(1);
    expect(String(rb.all)).toMatch(/SignalException: Process \d+ got signal: 15/);
    expect(await lab.pids('B')).toEqual([]);
    await lab.stopProcesses();
    await a;
  });
});
