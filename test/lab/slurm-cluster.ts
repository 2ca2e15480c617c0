/**
 * A real Slurm cluster on one machine (shared/LAB.md "A real Slurm cluster in
 * namespaces"): Debian's slurm-wlm and munge, one host per network namespace.
 *
 *   slurmctl   slurmctld                  eno1 203.0.113.1
 *   node01-03  slurmd (NodeName node[01-03]) eno1 203.0.113.11-13, ens3f0 198.18.20.1-3
 *                                            (ens3f0's sysfs speed: 100 Gb/s, eno1's 10)
 *
 * Two networks, each a bridge in a "switch" namespace of its own, so no
 * interface of the machine's own namespace takes part: the management net
 * (eno1), which every host name resolves to through /etc/netns/NS/hosts, as a
 * cluster's DNS usually has it, and the data net (ens3f0), which only the
 * nodes have.
 *
 * Everything Slurm writes (configuration, state, spool, logs, the munge key
 * and socket) lives in one private temp dir; the machine's /etc/munge and
 * /etc/slurm are neither read nor touched. Daemons run in the foreground and
 * are stopped by pid (this VM's policy-rc.d blocks init scripts). Every wait
 * is bounded; a failed start stops what it started, and stop() removes the
 * namespaces, their /etc/netns entries and the temp dir.
 */

import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa, execaSync, type ResultPromise } from 'execa';
import { mungedCommand } from './munged.js';
import { Lab, netnsUnavailable } from './netns.js';

export const CONTROLLER = 'slurmctl';
export const SLURM_NODES = ['node01', 'node02', 'node03'] as const;
export type SlurmNodeName = (typeof SLURM_NODES)[number];

/** Seconds between scancel's SIGTERM and its SIGKILL (slurm.conf KillWait). */
export const KILL_WAIT_S = 2;

export interface SlurmNode {
  readonly name: SlurmNodeName;
  readonly namespace: string;
  readonly mgmtIface: string;
  readonly mgmtAddress: string;
  readonly dataIface: string;
  readonly dataAddress: string;
}

/** How a job ended, as `scontrol show job` says it. */
export interface JobEnd {
  state: string;
  /** Slurm's `status:signal` of the batch script. */
  exitCode: string;
}

/** One row of `scontrol listpids`: a process of a step on one node. */
export interface StepProcess {
  pid: number;
  /** The task's global id for the process Slurm started as the task; null for its descendants. */
  taskId: number | null;
}

const PARTITION = 'lab';
const MGMT_IFACE = 'eno1';
const DATA_IFACE = 'ens3f0';
const CONTROLLER_ADDRESS = '203.0.113.1';
const GPUS_PER_NODE = 8;
/** What the data NIC's sysfs speed says (the management one keeps the veth's 10000). */
export const DATA_SPEED_MBPS = 100_000;
/** Upper bound of any single command the cluster runs for itself. */
const STEP_TIMEOUT_MS = 10_000;
/** Bound of every wait for the cluster's own state; measured here, the nodes are idle 1-2 s after the daemons start. */
const WAIT_TIMEOUT_MS = 30_000;
const POLL_MS = 200;
/** Where the daemons and clients are found; a job's own PATH is what the test hands sbatch. */
const SEARCH_PATH = process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin';
const FINISHED_STATES = new Set([
  'COMPLETED',
  'FAILED',
  'CANCELLED',
  'TIMEOUT',
  'NODE_FAIL',
  'OUT_OF_MEMORY',
  'BOOT_FAIL',
  'DEADLINE',
  'PREEMPTED',
]);

const MISSING_PROGRAMS = ['munged', 'slurmctld', 'slurmd', 'sbatch', 'srun', 'iptables'].filter(
  (program) => !['/usr/sbin', '/usr/bin', '/sbin'].some((dir) => existsSync(join(dir, program))),
);

/** Why the Slurm tier cannot run here, or null when it can. */
export const slurmUnavailable: string | null =
  netnsUnavailable ??
  (MISSING_PROGRAMS.length > 0
    ? `${MISSING_PROGRAMS.join(', ')} missing (apt-get install -y --no-install-recommends slurm-wlm munge iptables)`
    : null);

function nodeAt(index: number, name: SlurmNodeName, lab: Lab): SlurmNode {
  return {
    name,
    namespace: lab.ns(name),
    mgmtIface: MGMT_IFACE,
    mgmtAddress: `203.0.113.${11 + index}`,
    dataIface: DATA_IFACE,
    dataAddress: `198.18.20.${1 + index}`,
  };
}

export class SlurmCluster {
  readonly nodes: readonly SlurmNode[];
  /** SLURM_CONF: every Slurm command of this cluster needs it (without it clients look for DNS SRV records). */
  readonly conf: string;
  private readonly daemons: { name: string; child: ResultPromise }[] = [];
  private removeSignalHandlers = () => {};

  private constructor(
    private readonly lab: Lab,
    readonly dir: string,
  ) {
    this.nodes = SLURM_NODES.map((name, index) => nodeAt(index, name, lab));
    this.conf = join(dir, 'etc', 'slurm.conf');
  }

  /** Builds the networks, starts munged, slurmctld and the slurmds, and waits until every node is idle. */
  static async start(): Promise<SlurmCluster> {
    const dir = mkdtempSync(join(tmpdir(), 'ncr-slurm-'));
    const cluster = new SlurmCluster(new Lab('slurm'), dir);
    cluster.removeSignalHandlers = stopOnSignal(cluster);
    try {
      cluster.writeFiles();
      await bounded(cluster.buildNetworks(), 'building the networks');
      await cluster.startDaemons();
      await cluster.waitUntilIdle();
      return cluster;
    } catch (error) {
      const logs = cluster.logTails();
      await cluster.stop();
      throw new Error(`the Slurm cluster did not come up: ${(error as Error).message}\n${logs}`);
    }
  }

  /** munged's socket, which slurm.conf's AuthInfo names. */
  get mungeSocket(): string {
    return join(this.dir, 'munge.socket');
  }

  node(name: SlurmNodeName): SlurmNode {
    return this.nodes.find((node) => node.name === name) as SlurmNode;
  }

  /** A fresh directory inside the cluster's temp dir (a job's submit dir, a PATH dir). */
  workdir(name: string): string {
    const path = join(this.dir, 'work', name);
    mkdirSync(path, { recursive: true });
    return path;
  }

  /**
   * A Slurm client (sbatch, srun, scancel, scontrol, sinfo), always in the
   * controller's namespace: from the machine's own, a lab address would go
   * out through its default gateway. It runs with the given hostname:
   * slurmctl by default, so that jobs see the lab's submit host
   * (SLURM_SUBMIT_HOST), not the machine's name; a node's for `scontrol
   * listpids`. The environment is exactly PATH, SLURM_CONF and `env`, which
   * sbatch and srun hand on to the job (--export=ALL).
   */
  client(
    command: string,
    args: readonly string[],
    {
      env = {},
      hostname = CONTROLLER,
      cwd = this.dir,
      timeout = STEP_TIMEOUT_MS,
    }: ClientOptions = {},
  ) {
    const argv = [
      'netns',
      'exec',
      this.lab.ns(CONTROLLER),
      ...withHostname(hostname, command, args),
    ];
    return execa('ip', argv, {
      cwd,
      timeout,
      reject: false,
      env: { PATH: SEARCH_PATH, SLURM_CONF: this.conf, ...env },
      extendEnv: false,
    });
  }

  /** A client that must succeed: its stdout, or an error with its stderr. */
  async command(command: string, args: readonly string[], options: ClientOptions = {}) {
    const result = await this.client(command, args, options);
    if (result.exitCode !== 0) {
      throw new Error(`${command} ${args.join(' ')}: exit ${result.exitCode}: ${result.stderr}`);
    }
    return result.stdout;
  }

  /** `sbatch --parsable ARGS SCRIPT` in `cwd`; the job id. */
  async sbatch(
    script: string,
    { cwd, env, args = [] }: { cwd: string; env: Record<string, string>; args?: string[] },
  ): Promise<number> {
    const stdout = await this.command('sbatch', ['--parsable', ...args, script], { cwd, env });
    return Number(stdout.trim().split(';')[0]);
  }

  /** Polls `scontrol show job` until the job has finished; throws after `timeoutMs`. */
  async waitForJob(jobId: number, timeoutMs: number): Promise<JobEnd> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const end = await this.jobState(jobId);
      if (FINISHED_STATES.has(end.state)) return end;
      if (Date.now() > deadline) {
        throw new Error(`job ${jobId} still ${end.state} after ${timeoutMs} ms`);
      }
      await sleep(POLL_MS);
    }
  }

  async jobState(jobId: number): Promise<JobEnd> {
    const stdout = await this.command('scontrol', ['show', 'job', '--oneliner', String(jobId)]);
    return {
      state: stdout.match(/\bJobState=(\S+)/)?.[1] ?? 'UNKNOWN',
      exitCode: stdout.match(/\bExitCode=(\S+)/)?.[1] ?? '',
    };
  }

  async scancel(jobId: number): Promise<void> {
    await this.command('scancel', [String(jobId)]);
  }

  /** Cancels every job (the cluster is one suite's alone) and waits until the queue is empty. */
  async cancelAll(): Promise<void> {
    await this.command('scancel', [`--partition=${PARTITION}`]);
    await this.waitFor(
      async () => (await this.command('squeue', ['--noheader'])).trim() === '',
      () => 'empty queue',
    );
  }

  /**
   * `scontrol listpids JOB.STEP` for one node. It asks that node's
   * slurmstepd over the unix socket in the node's spool dir (a file, so the
   * controller's namespace reaches it), and finds the node by its hostname.
   */
  async stepProcesses(jobId: number, step: number, node: SlurmNodeName): Promise<StepProcess[]> {
    const stdout = await this.command('scontrol', ['listpids', `${jobId}.${step}`], {
      hostname: node,
    });
    // PID JOBID STEPID LOCALID GLOBALID; descendants of a task show '-' for both ids.
    return stdout
      .split('\n')
      .slice(1)
      .map((line) => line.trim().split(/\s+/))
      .filter((fields) => /^\d+$/.test(fields[0] ?? ''))
      .map((fields) => ({
        pid: Number(fields[0]),
        taskId: /^\d+$/.test(fields[4] ?? '') ? Number(fields[4]) : null,
      }));
  }

  /** A command on a node (its namespace, its /etc/hosts), e.g. iptables or sysctl; its stdout. */
  async onNode(node: SlurmNodeName, command: string, args: readonly string[]): Promise<string> {
    const argv = ['netns', 'exec', this.lab.ns(node), command, ...args];
    const { stdout } = await execa('ip', argv, { timeout: STEP_TIMEOUT_MS });
    return stdout;
  }

  /** Stops the daemons by pid, then removes the namespaces (killing what the jobs left) and the temp dir. Safe to call twice. */
  async stop(): Promise<void> {
    this.removeSignalHandlers();
    for (const daemon of this.daemons.splice(0).reverse()) await stopDaemon(daemon.child);
    await this.lab.cleanup();
    rmSync(this.dir, { recursive: true, force: true });
  }

  private writeFiles(): void {
    for (const sub of ['etc', 'state', 'spool', 'log', 'dev']) mkdirSync(join(this.dir, sub));
    writeFileSync(this.conf, slurmConf(this.dir));
    writeFileSync(join(this.dir, 'etc', 'cgroup.conf'), CGROUP_CONF);
    writeFileSync(join(this.dir, 'etc', 'gres.conf'), gresConf(this.dir));
    // gres.conf wants a device file per GPU; character device 1,3 (null)
    // stands in for /dev/nvidia*.
    for (let gpu = 0; gpu < GPUS_PER_NODE; gpu += 1) {
      execaSync('mknod', [join(this.dir, 'dev', `nvidia${gpu}`), 'c', '1', '3']);
    }
  }

  private async buildNetworks(): Promise<void> {
    const hosts = [
      '127.0.0.1 localhost',
      `${CONTROLLER_ADDRESS} ${CONTROLLER}`,
      ...this.nodes.map((node) => `${node.mgmtAddress} ${node.name}`),
      '',
    ].join('\n');
    await this.lab.host('switch');
    for (const bridge of ['mgmt', 'data']) {
      await this.lab.ip('switch', 'link', 'add', bridge, 'type', 'bridge');
      await this.lab.ip('switch', 'link', 'set', bridge, 'up');
    }
    await this.lab.host(CONTROLLER, hosts);
    await this.plug(CONTROLLER, MGMT_IFACE, 'mgmt', `${CONTROLLER_ADDRESS}/24`);
    for (const node of this.nodes) {
      await this.lab.host(node.name, hosts);
      await this.plug(node.name, node.mgmtIface, 'mgmt', `${node.mgmtAddress}/24`);
      await this.plug(node.name, node.dataIface, 'data', `${node.dataAddress}/24`);
    }
  }

  /** A veth from the host to a bridge of the switch, with the host's address on it. */
  private async plug(host: string, iface: string, bridge: string, cidr: string): Promise<void> {
    const port = `${bridge[0]}-${host}`;
    await this.lab.link(host, iface, 'switch', port);
    await this.lab.ip('switch', 'link', 'set', port, 'master', bridge);
    await this.lab.addr(host, iface, cidr);
  }

  private async startDaemons(): Promise<void> {
    // munged in the machine's own namespace: its socket is a file, so every
    // namespace reaches it (LAB.md); its key and socket are ours alone.
    const { socket, argv } = mungedCommand(this.dir);
    this.daemon('munged', argv);
    await this.waitFor(
      () => existsSync(socket),
      () => 'the munge socket',
    );
    // `ip netns exec` does not change the hostname, and slurmctld refuses to
    // run on a host that is not its SlurmctldHost: each daemon gets a UTS
    // namespace named after its host (LAB.md).
    this.daemon('slurmctld', [
      'ip',
      'netns',
      'exec',
      this.lab.ns(CONTROLLER),
      ...withHostname(CONTROLLER, 'slurmctld', ['-D']),
    ]);
    // The data NIC says it runs at 100 Gb/s, as a data NIC beside a 10 Gb/s
    // management port does (every veth says 10000): a bind mount in slurmd's
    // own mount namespace, which every job step on the node inherits (LAB.md).
    const speed = join(this.dir, 'etc', 'data-nic-speed');
    writeFileSync(speed, `${DATA_SPEED_MBPS}\n`);
    for (const node of this.nodes) {
      this.daemon(node.name, [
        ...['ip', 'netns', 'exec', node.namespace],
        ...withHostname(node.name, 'slurmd', ['-D', '-N', node.name], {
          file: speed,
          over: `/sys/class/net/${node.dataIface}/speed`,
        }),
      ]);
    }
  }

  /**
   * A daemon in the foreground. Every wrapper in its command execs, so the
   * pid held is the daemon's own and stop() signals it directly.
   */
  private daemon(name: string, [command, ...args]: string[]): void {
    const log = { file: join(this.dir, 'log', `${name}.out`), append: true };
    const child = execa(command as string, args, {
      env: { PATH: SEARCH_PATH, SLURM_CONF: this.conf },
      extendEnv: false,
      stdin: 'ignore',
      stdout: log,
      stderr: log,
      reject: false,
    });
    this.daemons.push({ name, child });
  }

  private async waitUntilIdle(): Promise<void> {
    let states = '';
    await this.waitFor(
      async () => {
        const { stdout } = await this.client('sinfo', ['--noheader', '--Node', '--format=%N %t']);
        states = stdout.trim().replace(/\n/g, ', ');
        const idle = stdout.split('\n').filter((line) => /^\S+ idle$/.test(line.trim()));
        return idle.length === SLURM_NODES.length;
      },
      () => `all nodes idle (sinfo: ${states || 'no answer'})`,
    );
  }

  /** Polls `ready` until it holds; throws when a daemon has died or WAIT_TIMEOUT_MS has passed. */
  private async waitFor(
    ready: () => boolean | Promise<boolean>,
    what: () => string,
  ): Promise<void> {
    const deadline = Date.now() + WAIT_TIMEOUT_MS;
    for (;;) {
      if (await ready()) return;
      const dead = this.daemons.find((daemon) => daemon.child.exitCode !== null);
      if (dead) throw new Error(`${dead.name} exited (${dead.child.exitCode}) before ${what()}`);
      if (Date.now() > deadline) throw new Error(`no ${what()} after ${WAIT_TIMEOUT_MS} ms`);
      await sleep(POLL_MS);
    }
  }

  /** The end of every daemon's log, for a failed start. */
  private logTails(): string {
    return this.daemons
      .map(({ name }) => {
        const file = join(this.dir, 'log', `${name}.out`);
        const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
        return `--- ${name}\n${text.split('\n').slice(-15).join('\n')}`;
      })
      .join('\n');
  }
}

interface ClientOptions {
  env?: Record<string, string>;
  hostname?: string;
  cwd?: string;
  timeout?: number;
}

/**
 * argv that runs COMMAND in a UTS namespace of its own named `hostname`,
 * exec'ing at every step; with `bind`, also in a mount namespace of its own
 * where `bind.file` lies over `bind.over`.
 */
function withHostname(
  hostname: string,
  command: string,
  args: readonly string[],
  bind?: { file: string; over: string },
): string[] {
  if (bind === undefined) {
    return [
      ...['unshare', '--uts', 'sh', '-c', 'hostname "$1" && shift && exec "$@"'],
      ...['sh', hostname, command, ...args],
    ];
  }
  return [
    ...['unshare', '--uts', '--mount', 'sh', '-c'],
    'hostname "$1" && mount --bind "$2" "$3" && shift 3 && exec "$@"',
    ...['sh', hostname, bind.file, bind.over, command, ...args],
  ];
}

/**
 * The cluster's slurm.conf. What each unusual line is for:
 * - SlurmdParameters=config_overrides: nodes claim the CPUs=64 and 8 GPUs
 *   the template asks for, which this 2-core machine does not have;
 * - ProctrackType=proctrack/linuxproc, TaskPlugin=task/none: `ip netns exec`
 *   remounts /sys, so slurmd finds no cgroup filesystem; these two never
 *   touch it (LAB.md);
 * - KillWait: scancel sends SIGCONT and SIGTERM to every process of the
 *   step, then SIGKILL this many seconds later; short, so a test sees the
 *   whole sequence quickly, yet long enough for a doubled SIGTERM to show;
 * - sched/builtin: a job starts as soon as it is submitted, no backfill cycle.
 */
function slurmConf(dir: string): string {
  return `${[
    'ClusterName=ncclrunlab',
    `SlurmctldHost=${CONTROLLER}`,
    'SlurmUser=root',
    'SlurmdUser=root',
    'AuthType=auth/munge',
    'CredType=cred/munge',
    `AuthInfo=socket=${join(dir, 'munge.socket')}`,
    `StateSaveLocation=${join(dir, 'state')}`,
    `SlurmdSpoolDir=${join(dir, 'spool', '%n')}`,
    `SlurmctldPidFile=${join(dir, 'slurmctld.pid')}`,
    `SlurmdPidFile=${join(dir, 'slurmd-%n.pid')}`,
    `SlurmctldLogFile=${join(dir, 'log', 'slurmctld.log')}`,
    `SlurmdLogFile=${join(dir, 'log', 'slurmd-%n.log')}`,
    'SlurmdParameters=config_overrides',
    'ProctrackType=proctrack/linuxproc',
    'TaskPlugin=task/none',
    'JobAcctGatherType=jobacct_gather/none',
    'AccountingStorageType=accounting_storage/none',
    'MpiDefault=none',
    'SchedulerType=sched/builtin',
    'SelectType=select/cons_tres',
    'SelectTypeParameters=CR_Core',
    'GresTypes=gpu',
    'ReturnToService=2',
    `KillWait=${KILL_WAIT_S}`,
    `NodeName=node[01-03] CPUs=64 Gres=gpu:${GPUS_PER_NODE} State=UNKNOWN`,
    `PartitionName=${PARTITION} Nodes=ALL Default=YES MaxTime=INFINITE State=UP`,
  ].join('\n')}\n`;
}

/** cgroup/v1 named outright: slurmd's autodetection finds no cgroup filesystem here (LAB.md). */
const CGROUP_CONF = 'CgroupPlugin=cgroup/v1\n';

/** The GPUs `--gpus-per-node` asks for, one device file each (writeFiles makes them). */
function gresConf(dir: string): string {
  return `NodeName=node[01-03] Name=gpu File=${join(dir, 'dev', `nvidia[0-${GPUS_PER_NODE - 1}]`)}\n`;
}

/** SIGTERM by pid, then SIGKILL when the daemon outlives the bound. */
async function stopDaemon(child: ResultPromise): Promise<void> {
  if (child.exitCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STEP_TIMEOUT_MS / 2);
  await child;
  clearTimeout(timer);
}

/**
 * Ctrl-C on a test run reaches this worker too, and afterAll would not run:
 * the daemons, namespaces and /etc/netns files would outlive it. Stops the
 * cluster, then exits 128 + N as a shell does. Returns the function that
 * removes the handlers.
 */
function stopOnSignal(cluster: SlurmCluster): () => void {
  const numbers = { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 } as const;
  const handlers = Object.entries(numbers).map(([signal, number]) => {
    const handler = () => {
      cluster.stop().finally(() => process.exit(128 + number));
    };
    process.once(signal, handler);
    return () => process.off(signal, handler);
  });
  return () => {
    for (const remove of handlers) remove();
  };
}

/** `ip` answers at once; a network build that hangs fails the start instead of the suite's hook timeout. */
async function bounded(work: Promise<void>, what: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${what} took over ${WAIT_TIMEOUT_MS} ms`)),
      WAIT_TIMEOUT_MS,
    );
  });
  try {
    await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
