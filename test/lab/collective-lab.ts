/**
 * The lab of `--verify collective` (test/e2e/collective-*.test.ts): nodes
 * in network namespaces on one bridge (a switch namespace), each with its
 * own host name (a UTS namespace) and /etc/hosts, running bin/nccl-run in
 * front of a real torchrun (shared/LAB.md "A collective with the job's own
 * stack, without a GPU"). One node's link can be shaped with tc, as the
 * slow node of the issue. The private folders of the miniature are made
 * under a TMPDIR of the lab's own, inside the checkout, where a lab root's
 * chroot sees them at the same path (torchrun-in-root.sh binds the
 * checkout), and the test can tell that nothing is left there.
 */
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { labTmpDir } from './debian-root.js';
import { Lab } from './netns.js';
import { NCCL_RUN_BIN, type TorchStack, type TorchVersion } from './torch-job.js';

export const NODE_NAMES = ['col-a', 'col-b', 'col-c'] as const;
export type ColNode = (typeof NODE_NAMES)[number];
const address = (index: number) => `198.18.70.${index + 1}`;

export interface NodeRun {
  /** The exit status; -1 where a signal ended it (`signal`). */
  code: number;
  signal: string | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  env?: Record<string, string>;
  timeoutMs?: number;
  /** Aborting it sends SIGTERM to the node's command, as a requeue or scancel does. */
  cancelSignal?: AbortSignal;
}

export class CollectiveLab {
  readonly lab = new Lab('col');
  /** TMPDIR of every node's nccl-run: the miniature's private folders go there. */
  readonly tmp: string;
  private readonly nodes: ColNode[];

  private constructor(nodes: number) {
    this.nodes = NODE_NAMES.slice(0, nodes);
    this.tmp = labTmpDir('col-');
  }

  static async create(nodes: number): Promise<CollectiveLab> {
    const made = new CollectiveLab(nodes);
    try {
      await made.build();
    } catch (error) {
      await made.cleanup();
      throw error;
    }
    return made;
  }

  private async build(): Promise<void> {
    const { lab } = this;
    const hosts = [
      '127.0.0.1 localhost',
      ...this.nodes.map((name, index) => `${address(index)} ${name}`),
      '',
    ].join('\n');
    await lab.host('sw');
    await lab.ip('sw', 'link', 'add', 'br0', 'type', 'bridge');
    await lab.ip('sw', 'link', 'set', 'br0', 'up');
    for (const [index, name] of this.nodes.entries()) {
      await lab.host(name, hosts);
      await lab.link(name, 'eth1', 'sw', `p-${name}`);
      await lab.ip('sw', 'link', 'set', `p-${name}`, 'master', 'br0');
      await lab.addr(name, 'eth1', `${address(index)}/24`);
    }
  }

  address(node: ColNode): string {
    return address(NODE_NAMES.indexOf(node));
  }

  /** tc's token bucket on the node's own side of its link (shared/LAB.md "Several hosts"). */
  async shape(node: ColNode, rate: string): Promise<void> {
    await this.lab.ip(node, 'link', 'set', 'eth1', 'up');
    await this.lab.exec(node, 'tc', [
      ...['qdisc', 'add', 'dev', 'eth1', 'root', 'tbf', 'rate', rate],
      ...['burst', '64kb', 'latency', '100ms'],
    ]);
  }

  /** bin/nccl-run ARGS on the node, under its host name, with PATH, TMPDIR and the stack's environment. */
  run(
    node: ColNode,
    stack: TorchStack,
    args: readonly string[],
    options: RunOptions = {},
  ): Promise<NodeRun> {
    return this.runCommand(node, stack, [NCCL_RUN_BIN, ...args], options);
  }

  /** Any command on the node, as run() starts nccl-run (the bench's bare torchrun job). */
  runCommand(
    node: ColNode,
    stack: TorchStack,
    command: readonly string[],
    options: RunOptions = {},
  ): Promise<NodeRun> {
    const child = this.lab.exec(
      node,
      'unshare',
      [...['--uts', 'sh', '-c', 'hostname "$1" && shift && exec "$@"', 'sh', node], ...command],
      {
        env: {
          PATH: process.env.PATH ?? '',
          TMPDIR: this.tmp,
          ...stack.env,
          ...options.env,
        },
        extendEnv: false,
        reject: false,
        timeout: options.timeoutMs ?? 120_000,
        ...(options.cancelSignal && { cancelSignal: options.cancelSignal }),
      },
    );
    return child.then((result) => ({
      code: result.exitCode ?? -1,
      signal: result.signal ?? null,
      stdout: String(result.stdout),
      stderr: String(result.stderr),
    }));
  }

  /** The processes still running on the node (ip netns pids). */
  async pids(node: ColNode): Promise<number[]> {
    const { stdout } = await execa('ip', ['netns', 'pids', this.lab.ns(node)], { reject: false });
    return String(stdout).split('\n').filter(Boolean).map(Number);
  }

  /** The stage files of the miniatures now running: their workers have started. */
  stages(): string[] {
    const list = (dir: string) => {
      try {
        return readdirSync(dir);
      } catch {
        // removed as the miniature ended
        return [];
      }
    };
    return list(this.tmp)
      .filter((name) => name.startsWith('nccl-run-collective-'))
      .flatMap((dir) => list(join(this.tmp, dir)).filter((name) => name.startsWith('stage.')));
  }

  /** What the miniatures left in TMPDIR: nothing, once every node has ended. */
  leftovers(): string[] {
    return readdirSync(this.tmp).filter((name) => name.startsWith('nccl-run-collective-'));
  }

  async cleanup(): Promise<void> {
    await this.lab.cleanup();
    rmSync(this.tmp, { recursive: true, force: true });
  }
}

/** torchrun's options of a job on `nodes` nodes of the lab, spelt as the torch's torchrun spells them. */
export function jobOptions(
  lab: CollectiveLab,
  stack: TorchStack,
  node: ColNode,
  job: { nodes: number; rendezvous: 'static' | 'c10d'; port: number },
): string[] {
  const option = (dest: string) =>
    stack.version === ('1.13' satisfies TorchVersion)
      ? `--${dest}`
      : `--${dest.replaceAll('_', '-')}`;
  const index = NODE_NAMES.indexOf(node);
  const master = lab.address('col-a');
  const common = [
    option('nnodes'),
    String(job.nodes),
    option('nproc_per_node'),
    '1',
    ...stack.options,
  ];
  if (job.rendezvous === 'static') {
    return [
      ...common,
      ...[option('node_rank'), String(index), option('master_addr'), master],
      ...[option('master_port'), String(job.port)],
    ];
  }
  return [
    ...common,
    ...[option('rdzv_backend'), 'c10d', option('rdzv_endpoint'), `${master}:${job.port}`],
    ...[option('rdzv_id'), 'col'],
    // torch hosts the c10d store where the endpoint matches the host's names or
    // addresses (rendezvous/utils.py _matches_machine_hostname); the master says so.
    ...(node === 'col-a' ? [option('rdzv_conf'), 'is_host=1'] : []),
  ];
}
