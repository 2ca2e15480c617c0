/**
 * The Slurm tier (issue 9): the template `nccl-run init slurm` writes,
 * submitted with a real sbatch to a real cluster of three nodes
 * (test/lab/slurm-cluster.ts), whose host names resolve to a management
 * network beside a separate data network.
 *
 * The template runs as written, except for what this lab cannot provide:
 * - GPUs: the nodes claim 64 CPUs and 8 GPUs (slurm.conf config_overrides,
 *   gres.conf on null devices), so `--gpus-per-node=8` and
 *   `--cpus-per-task=32` are satisfiable on a 2-core machine without a GPU;
 * - nccl-run installed on PATH: a PATH dir holding `nccl-run` linked to the
 *   package's bin, as `npm install -g` links it;
 * - torchrun: the recording launcher slurm-launcher.js, named by nccl-run's
 *   own NCCL_RUN_TORCHRUN setting in the job's environment; the one run with
 *   the host's real torchrun (torch 1.13 on Debian 12, 2.6 on Debian 13;
 *   the job checks the torch.__version__ it reports) has 1 worker per node,
 *   not the template's 8 (two cores cannot run 16 torch workers), passes
 *   `--redirects 1 --tee 1` as PET_REDIRECTS/PET_TEE (torchrun reads PET_<DEST>
 *   as its options' defaults) against torch 1.13's Python 3.11 crash
 *   (LAB.md), and on torch 2.x the lab's libuv workaround (torch26Env), and
 *   train.py is test/fixtures/allreduce.py;
 * - three nodes: `sbatch --nodes=3` on the command line, which sbatch
 *   applies over the script's `#SBATCH --nodes=2`.
 */
import { existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { execa } from 'execa';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { PROTOCOL_VERSION } from '../../src/probe/protocol.js';
import { type FixtureReport, fixture, readReport } from '../fixtures/fixture-report.js';
import { CHECKOUT, torch26Env } from '../lab/debian-root.js';
import { HOST_TORCHRUN, torchrunVersion } from '../lab/host-torchrun.js';
import {
  DATA_SPEED_MBPS,
  KILL_WAIT_S,
  SLURM_NODES,
  SlurmCluster,
  type SlurmNodeName,
  slurmUnavailable,
} from '../lab/slurm-cluster.js';
import { tier } from '../lab/tier.js';

/** What slurm-launcher.js writes, beyond report.js's fields. */
interface LauncherReport extends FixtureReport {
  /** /proc/PPID/comm: slurmstepd when nothing stands between Slurm and the launcher. */
  parent: string;
  rendezvous: string;
}

/** What `nccl-run check --json` prints (SPEC "Outputs"). */
interface CheckReport {
  ok: boolean;
  level: string;
  interface: string;
  localAddress: string;
  results: { peer: string; address: string; ok: boolean; error: string | null }[];
}

const GPUS_PER_NODE = 8;
/** Template default; the job's files are named after it (%x-%j.out). */
const JOB_NAME = 'train';
/** A job of the recording launcher takes about 1.5 s here; the bound is generous for a loaded machine. */
const JOB_TIMEOUT_MS = 60_000;

/** SPEC "Cluster fill-in": port = 15000 + 2 * (SLURM_JOB_ID mod 7000) when MASTER_PORT is unset. */
const expectedPort = (jobId: number) => 15_000 + 2 * (jobId % 7_000);

tier('the Slurm template under a real sbatch', slurmUnavailable, () => {
  let cluster: SlurmCluster;
  let template: string;
  let pathDir: string;
  let jobs = 0;

  beforeAll(async () => {
    cluster = await SlurmCluster.start();
    pathDir = cluster.workdir('bin');
    symlinkSync(packageBin(), join(pathDir, 'nccl-run'));
    template = join(cluster.workdir('template'), `${JOB_NAME}.sbatch`);
    await execa(join(pathDir, 'nccl-run'), ['init', 'slurm', '--out', template]);
  });
  afterEach(async () => {
    await cluster?.cancelAll();
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  /**
   * A fresh submit dir, and the environment a user's shell would hand sbatch,
   * with a TMPDIR in the cluster's folder, removed with it: torchrun's agent
   * makes its log folder there (torchelastic_*, which it never removes).
   */
  function jobSetup(env: Record<string, string> = {}): {
    dir: string;
    env: Record<string, string>;
  } {
    jobs += 1;
    const dir = cluster.workdir(`job${jobs}`);
    return {
      dir,
      env: {
        PATH: `${pathDir}:${process.env.PATH}`,
        HOME: process.env.HOME ?? '/root',
        TMPDIR: cluster.workdir('tmp'),
        ...env,
      },
    };
  }

  /** A job of the recording launcher in place of torchrun, reporting into the submit dir. */
  function recordingJob(env: Record<string, string> = {}) {
    const job = jobSetup({ NCCL_RUN_TORCHRUN: fixture('slurm-launcher.js'), ...env });
    job.env.FIXTURE_REPORT_DIR = job.dir;
    return job;
  }

  /** The job's output file, then each launcher's report: its rendezvous says what its store connect met. */
  function jobOutput(dir: string, jobId: number): string {
    const file = join(dir, `${JOB_NAME}-${jobId}.out`);
    const reports = SLURM_NODES.map(
      (node) => `${node}: ${JSON.stringify(readReport(join(dir, `${node}.json`)) ?? null)}`,
    );
    return [existsSync(file) ? readFileSync(file, 'utf8') : `(no ${file})`, ...reports].join('\n');
  }

  it('runs to completion on 3 nodes, each told master, rank, node count and port by Slurm', async () => {
    const { dir, env } = recordingJob();
    const jobId = await cluster.sbatch(template, { cwd: dir, env, args: ['--nodes=3'] });
    const end = await cluster.waitForJob(jobId, JOB_TIMEOUT_MS);

    expect(end, jobOutput(dir, jobId)).toEqual({ state: 'COMPLETED', exitCode: '0:0' });
    for (const [rank, node] of SLURM_NODES.entries()) {
      const report = launcherReport(dir, node);
      expect(report.argv).toEqual([`--nproc_per_node=${GPUS_PER_NODE}`, 'train.py']);
      expect(report.env).toMatchObject({
        SLURM_STEP_NODELIST: 'node[01-03]',
        SLURM_NODEID: String(rank),
        // The first host of the step's node list, under its Slurm name.
        PET_MASTER_ADDR: 'node01',
        PET_MASTER_PORT: String(expectedPort(jobId)),
        PET_NNODES: '3',
        PET_NODE_RANK: String(rank),
        // The master's name resolves to the management net here, as on most
        // clusters, where the subnet strategy would pick the interface on it;
        // the template's `agree` takes the fastest network every node has,
        // the data net (SPEC `agree`).
        NCCL_SOCKET_IFNAME: `=${cluster.node(node).dataIface}`,
        GLOO_SOCKET_IFNAME: cluster.node(node).dataIface,
        PET_LOCAL_ADDR: cluster.node(node).dataAddress,
      });
      expect(report.rendezvous).toBe('done');
    }
  });

  it('a real srun nccl-run check --verify peers vets the allocation, on the data network agree picks', async () => {
    const { dir, env } = jobSetup();
    const result = await vetAllocation(cluster, template, dir, env);

    expect(result.exitCode, result.logs).toBe(0);
    for (const node of SLURM_NODES) {
      const check = result.checks[node];
      expect(check, result.logs).toMatchObject({
        ok: true,
        level: 'peers',
        interface: cluster.node(node).dataIface,
        localAddress: cluster.node(node).dataAddress,
      });
      const others = cluster.nodes.filter((other) => other.name !== node);
      // Every other node reached at its address on the chosen network, by its Slurm name.
      expect(check?.results).toEqual(
        expect.arrayContaining(
          others.map((other) =>
            expect.objectContaining({ peer: other.name, address: other.dataAddress, ok: true }),
          ),
        ),
      );
      // Why: the network every node has, the fastest (sysfs says 100 Gb/s against eno1's 10).
      expect(result.logs).toContain(
        `(nccl-run): using ${cluster.node(node).dataIface} ${cluster.node(node).dataAddress} (agree: 198.18.20.0/24 is common to all 3 nodes and wins (its slowest node ${DATA_SPEED_MBPS} Mb/s, 203.0.113.0/24's 10000 Mb/s)`,
      );
    }
  });

  it('vets the data network when told to use it: the mesh dials the addresses the nodes chose, not their names', async () => {
    const { dir, env } = jobSetup();
    // The node names resolve to the management net; a node listening on its
    // data address is reached there only if peers dial what it registered
    // (SPEC "Cluster fill-in": the mesh dials the addresses they register,
    // not their names). A shorter timeout than the template's 60 s: a
    // healthy mesh answers in well under a second here.
    const dataNet = ['--iface', 'ens3f0', '--verify-timeout', '15s'];
    const result = await vetAllocation(cluster, template, dir, env, dataNet);

    expect(result.exitCode, result.logs).toBe(0);
    for (const node of SLURM_NODES) {
      const others = cluster.nodes.filter((other) => other.name !== node);
      expect(result.checks[node]?.results, result.logs).toEqual(
        expect.arrayContaining(
          others.map((other) =>
            expect.objectContaining({ peer: other.name, address: other.dataAddress, ok: true }),
          ),
        ),
      );
    }
  });

  it('membership is by MUNGE: the nodes pass, registering from the management network and proven on the data one', async () => {
    const { dir, env } = jobSetup();
    const result = await vetAllocation(cluster, template, dir, env, ['--iface', 'ens3f0']);

    expect(result.exitCode, result.logs).toBe(0);
    for (const node of SLURM_NODES) expect(result.checks[node]?.ok, result.logs).toBe(true);
    // Every node, the master among them, says which membership holds.
    const membership = result.logs
      .split('\n')
      .filter((line) => line.endsWith(`INFO (nccl-run): ${mungeLine(cluster)}`));
    expect(membership).toHaveLength(SLURM_NODES.length);
    expect(result.logs).not.toContain('refused a registration');
  });

  it("a task of another uid, with its own MUNGE credential, is no member: the registry refuses it, and the job's check fails", async () => {
    const { dir, env } = jobSetup();
    // Its own PATH: root's holds /root/.cargo/bin, which nobody cannot search, and
    // nccl-run's lookup of torchrun stops at that EACCES (left for the launcher's owner).
    const asNobody = `setpriv --reuid=65534 --regid=65534 --clear-groups env PATH=${pathDir}:/usr/bin:/bin nccl-run check ${SHORT_VET}`;
    const result = await vetWithNode03(cluster, dir, env, asNobody);
    const refusal =
      "node03 (rank 2)'s MUNGE credential is of uid 65534, and this job's probe runs as uid 0: not a member";

    expect(result.exitCode, result.logs).not.toBe(0);
    expect(result.output.node03, result.logs).toContain(refusal);
    expect(result.output.node01).toContain(`the probe registry refused a registration: ${refusal}`);
    for (const node of ['node01', 'node02'] as const) {
      expect(result.output[node], result.logs).toMatch(/rank 2 never registered|missing: node03/);
    }
  });

  it('a replayed MUNGE credential, one munged has decoded already, is no member', async () => {
    const { dir, env } = jobSetup();
    const node03 = cluster.node('node03');
    const replay = `node ${fixture('munge-replay.mjs')} ${CHECKOUT} 2 node03 ${node03.dataAddress}`;
    const result = await vetWithNode03(cluster, dir, env, replay);

    expect(result.exitCode, result.logs).not.toBe(0);
    expect(JSON.parse(result.output.node03 ?? 'null'), result.logs).toEqual({
      v: PROTOCOL_VERSION,
      kind: 'reject',
      reason:
        "node03 (rank 2)'s MUNGE credential is refused by munged (Replayed credential): not a member",
    });
    expect(result.output.node01).toContain('the probe registry refused a registration: node03');
  });

  it('the vet fails with 75, naming the node, when that node accepts nothing on its ephemeral ports', async () => {
    const { dir, env } = jobSetup();
    // NCCL's bootstrap and socket transport listen on ephemeral ports (SPEC
    // "Verification", peers): a firewall that lets the rendezvous through
    // but not them must fail the vet. Only new connections are refused, so
    // Slurm's own traffic to and from node03 still flows.
    const range = (await cluster.onNode('node03', 'sysctl', ['-n', 'net.ipv4.ip_local_port_range']))
      .trim()
      .split(/\s+/)
      .join(':');
    const rule = ['INPUT', '-p', 'tcp', '--syn', '--dport', range, '-j', 'REJECT'];
    await cluster.onNode('node03', 'iptables', ['-I', ...rule, '--reject-with', 'tcp-reset']);
    try {
      // Shorter than the template's 60 s: the others wait for node03 to the end.
      const result = await vetAllocation(cluster, template, dir, env, ['--verify-timeout', '15s']);

      expect(result.exitCode, result.logs).toBe(75);
      // node03 registers from the management network and claims its data
      // address: the master's dial-back to its ephemeral port is refused, so
      // its claim is unproven and it is no member, told what to open.
      const node03 = cluster.node('node03');
      expect(result.logs).toContain(
        `node03 (rank 2) registered from ${node03.mgmtAddress} claiming ${node03.dataAddress}:`,
      );
      expect(result.logs).toContain(
        `which the master cannot reach to prove it (refused, ECONNREFUSED): not a member; check that ${node03.dataAddress} is that node's and that a firewall there lets the master reach its ephemeral ports (net.ipv4.ip_local_port_range ${range.replace(':', '-')} on node03)`,
      );
      for (const node of ['node01', 'node02'] as const) {
        expect(result.checks[node]?.ok, result.logs).toBe(false);
        expect(result.logs).toMatch(/rank 2 never registered|missing: node03/);
      }
    } finally {
      await cluster.onNode('node03', 'iptables', ['-D', ...rule, '--reject-with', 'tcp-reset']);
    }
  });

  it('scancel delivers SIGTERM exactly once to the launcher, which is the task srun started', async () => {
    // FIXTURE_HOLD: the launcher records SIGTERM and stays, so a second
    // SIGTERM within KillWait would be recorded too, until Slurm's SIGKILL.
    const { dir, env } = recordingJob({ FIXTURE_HOLD: '1' });
    const jobId = await cluster.sbatch(template, { cwd: dir, env, args: ['--nodes=3'] });
    const reports = await launchersRunning(cluster, dir, jobId).catch((error: Error) => {
      throw new Error(`${error.message}\n${jobOutput(dir, jobId)}`);
    });
    const steps = Object.fromEntries(
      await Promise.all(
        SLURM_NODES.map(
          async (node) => [node, await cluster.stepProcesses(jobId, 0, node)] as const,
        ),
      ),
    );

    await cluster.scancel(jobId);
    const end = await cluster.waitForJob(jobId, (KILL_WAIT_S + 15) * 1_000);

    expect(end.state).toBe('CANCELLED');
    for (const [rank, node] of SLURM_NODES.entries()) {
      const before = reports[node] as LauncherReport;
      // Every process of the step, as Slurm's proctrack sees it: the task
      // Slurm started is the launcher itself, and nothing else is there
      // (SPEC "Launch": torchrun replaces nccl-run, same pid).
      expect
        .soft(steps[node], `${node} step processes`)
        .toEqual([{ pid: before.pid, taskId: rank }]);
      expect.soft(before.parent, `${node} launcher's parent`).toBe('slurmstepd');
      // scancel sends SIGCONT and SIGTERM to every process of the step, then
      // SIGKILL after KillWait: a wrapper that relays would double it.
      expect.soft(launcherReport(dir, node).signals, `${node} signals`).toEqual(['SIGTERM']);
    }
  });

  tier(
    'real torchrun',
    existsSync(HOST_TORCHRUN)
      ? null
      : `${HOST_TORCHRUN} is missing (apt-get install -y --no-install-recommends python3-torch)`,
    () => {
      const version = torchrunVersion();
      const torch = `torch ${version ?? 'of unknown version'}`;
      it(`2 nodes x 1 worker: the host's torchrun (${torch}) completes a Gloo all-reduce`, async () => {
        const { dir, env } = jobSetup({
          PET_REDIRECTS: '1',
          PET_TEE: '1',
          // LAB WORKAROUND (debian-root.ts): Debian's torch 2.6 TCPStore needs use_libuv=False.
          ...(version?.startsWith('1.') ? {} : torch26Env),
        });
        symlinkSync(fixture('allreduce.py'), join(dir, 'train.py'));
        const script = join(dir, `${JOB_NAME}.sbatch`);
        const oneWorker = readFileSync(template, 'utf8').replace(
          `--nproc_per_node=${GPUS_PER_NODE} `,
          '--nproc_per_node=1 ',
        );
        writeFileSync(script, oneWorker);
        const jobId = await cluster.sbatch(script, { cwd: dir, env, args: ['--nodes=2'] });
        const end = await cluster.waitForJob(jobId, 120_000);
        const output = jobOutput(dir, jobId);

        expect(end, output).toEqual({ state: 'COMPLETED', exitCode: '0:0' });
        const line = output.split('\n').find((text) => text.includes('{"ranks"')) ?? '';
        expect(JSON.parse(line.slice(line.indexOf('{')))).toMatchObject({
          ranks: 2,
          hostname: 'node01',
          glooSocketIfname: cluster.node('node01').dataIface,
          // The torch that ran is the one /usr/bin/torchrun names.
          torch: expect.stringMatching(
            new RegExp(`^${(version ?? 'unknown').replace('.', '\\.')}\\.`),
          ),
        });
      });
    },
  );
});

/** The package's `nccl-run` bin (package.json), which npm links onto PATH. */
function packageBin(): string {
  const pkg = JSON.parse(readFileSync(join(CHECKOUT, 'package.json'), 'utf8')) as {
    bin: Record<string, string>;
  };
  return resolve(CHECKOUT, pkg.bin['nccl-run'] as string);
}

function launcherReport(dir: string, node: SlurmNodeName): LauncherReport {
  const report = readReport(join(dir, `${node}.json`));
  if (report === undefined) throw new Error(`no launcher report from ${node} in ${dir}`);
  return report as LauncherReport;
}

/**
 * The vet line the template offers (its commented `srun ... nccl-run check
 * --verify peers`), run on 3 nodes with `--json` and any extra nccl-run
 * options after its own (the last of a repeated option wins), each node's
 * stdout to a file of its own (srun's %N: the node name).
 */
async function vetAllocation(
  cluster: SlurmCluster,
  template: string,
  dir: string,
  env: Record<string, string>,
  extraOptions: readonly string[] = [],
) {
  const line = readFileSync(template, 'utf8').match(/^#\s+(srun .*nccl-run check .*)$/m)?.[1];
  if (line === undefined) throw new Error(`${template} offers no srun nccl-run check line`);
  const [, ...args] = line.trim().split(/\s+/);
  const result = await cluster.client(
    'srun',
    [
      '--nodes=3',
      `--output=${join(dir, 'check-%N.json')}`,
      `--error=${join(dir, 'check-%N.log')}`,
      ...args,
      ...extraOptions,
      '--json',
    ],
    { env, cwd: dir, timeout: 90_000 },
  );
  const checks: Partial<Record<SlurmNodeName, CheckReport>> = {};
  let logs = `srun: ${result.stderr}`;
  for (const node of SLURM_NODES) {
    const json = join(dir, `check-${node}.json`);
    if (existsSync(json)) checks[node] = JSON.parse(readFileSync(json, 'utf8')) as CheckReport;
    const log = join(dir, `check-${node}.log`);
    logs += `\n--- ${node}\n${existsSync(log) ? readFileSync(log, 'utf8') : ''}`;
  }
  return { exitCode: result.exitCode, checks, logs };
}

/** A peers check on the data network, bounded well under the tests' own limits. */
const SHORT_VET = '--iface ens3f0 --verify peers --verify-timeout 10s --json';

/** SPEC "Real jobs": the line every node of a Slurm job logs where its munged made a credential. */
function mungeLine(cluster: SlurmCluster): string {
  return `probe membership: every node proves with a MUNGE credential (munged at ${cluster.mungeSocket}) that it runs as uid 0; a process of another user is no member`;
}

/**
 * `srun --nodes=3 nccl-run check` on the data network with node03's task
 * replaced by `node03` (a shell command line): each node's stdout and
 * stderr together, by node.
 */
async function vetWithNode03(
  cluster: SlurmCluster,
  dir: string,
  env: Record<string, string>,
  node03: string,
) {
  const script = `if [ "$SLURM_NODEID" = 2 ]; then exec ${node03}; else exec nccl-run check ${SHORT_VET}; fi`;
  const result = await cluster.client(
    'srun',
    [
      '--nodes=3',
      '--ntasks-per-node=1',
      `--output=${join(dir, 'task-%N.txt')}`,
      'sh',
      '-c',
      script,
    ],
    { env, cwd: dir, timeout: 60_000 },
  );
  const output: Partial<Record<SlurmNodeName, string>> = {};
  for (const node of SLURM_NODES) {
    const file = join(dir, `task-${node}.txt`);
    if (existsSync(file)) output[node] = readFileSync(file, 'utf8');
  }
  const logs = `srun: ${result.stderr}\n${SLURM_NODES.map((node) => `--- ${node}\n${output[node] ?? ''}`).join('\n')}`;
  return { exitCode: result.exitCode, output, logs };
}

/** Waits until every node's launcher has finished the rendezvous; bounded, and fails as soon as the job ends. */
async function launchersRunning(cluster: SlurmCluster, dir: string, jobId: number) {
  const deadline = Date.now() + JOB_TIMEOUT_MS;
  for (;;) {
    const reports = Object.fromEntries(
      SLURM_NODES.map((node) => [node, readReport(join(dir, `${node}.json`))]),
    ) as Record<SlurmNodeName, LauncherReport | undefined>;
    if (Object.values(reports).every((report) => report?.rendezvous === 'done')) return reports;
    const { state } = await cluster.jobState(jobId);
    if (state !== 'RUNNING' && state !== 'PENDING' && state !== 'CONFIGURING') {
      throw new Error(`job ${jobId} is ${state} before every launcher ran`);
    }
    if (Date.now() > deadline) throw new Error(`launchers of job ${jobId} not all up in time`);
    await new Promise((done) => setTimeout(done, 200));
  }
}
