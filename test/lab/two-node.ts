/**
 * Two "nodes" of a cluster on one machine (shared/LAB.md), built to contain
 * every trap SPEC.md names:
 *
 * - a fast data link (veth, 10 Gb/s as veth reports) whose interface has a
 *   different name on each node (`ens3f0` on A, `enp65s0` on B), so no single
 *   `GLOO_SOCKET_IFNAME` fits both nodes;
 * - a management link `eth0` rate-limited to 50 Mbit/s (tc tbf), which each
 *   node's hostname resolves to: Gloo binds the address its hostname resolves
 *   to when no interface is named, so an untuned job runs on this link;
 * - a `docker0` bridge holding the same address on both nodes (198.19.0.1/16
 *   stands in for docker's 172.17.0.1/16), kept up by a container-side veth.
 *
 * Own hostnames: a network namespace shares the machine's UTS namespace, so
 * every command runs as `ip netns exec NS unshare --uts sh -c 'hostname nodeX;
 * exec CMD'`: a UTS namespace of its own, renamed, then replaced by CMD (no
 * extra process stays in between, so the pid execa sees is CMD's and signals
 * reach it directly). Both namespaces' /etc/hosts map both hostnames to their
 * management addresses, as a cluster's DNS typically does; torchrun's c10d
 * rendezvous hands workers the rank-0 agent's hostname, which must resolve.
 *
 * Every command gets a TMPDIR of the lab's own (debian-root.ts labTmpDir).
 *
 * Every step is bounded in time; a failed setup removes what it made, and
 * `cleanup()` removes the namespaces, /etc/netns files and that TMPDIR (safe
 * to call twice).
 */
import { rmSync } from 'node:fs';
import { type Options as ExecaOptions, execa } from 'execa';
import { labTmpDir } from './debian-root.js';
import { Lab } from './netns.js';

export type NodeName = 'A' | 'B';

export interface LabNode {
  readonly name: NodeName;
  /** The node's own hostname (its UTS namespace); resolves to `mgmtAddress`. */
  readonly hostname: string;
  readonly namespace: string;
  readonly dataIface: string;
  readonly dataAddress: string;
  readonly mgmtIface: string;
  readonly mgmtAddress: string;
}

/** The management link's rate: the "slow link" an untuned Gloo job ends up on. */
export const MANAGEMENT_RATE_MBIT = 50;
export const DATA_PREFIX_LENGTH = 24;
export const DOCKER_BRIDGE_CIDR = '198.19.0.1/16';

/** Upper bound for any single setup or teardown command. */
const STEP_TIMEOUT_MS = 10_000;

const NODES: Record<NodeName, Omit<LabNode, 'namespace'>> = {
  A: {
    name: 'A',
    hostname: 'nodeA',
    dataIface: 'ens3f0',
    dataAddress: '198.18.10.1',
    mgmtIface: 'eth0',
    mgmtAddress: '203.0.113.1',
  },
  B: {
    name: 'B',
    hostname: 'nodeB',
    dataIface: 'enp65s0',
    dataAddress: '198.18.10.2',
    mgmtIface: 'eth0',
    mgmtAddress: '203.0.113.2',
  },
};

export class TwoNodeLab {
  readonly a: LabNode;
  readonly b: LabNode;
  /** TMPDIR of every command on both nodes (run()). */
  readonly tmp: string;

  private constructor(private readonly lab: Lab) {
    this.a = { ...NODES.A, namespace: lab.ns('A') };
    this.b = { ...NODES.B, namespace: lab.ns('B') };
    this.tmp = labTmpDir('two-node-');
  }

  /** Builds both nodes and their links; on any failure removes what it made and throws. */
  static async create(tag: string): Promise<TwoNodeLab> {
    const built = new TwoNodeLab(new Lab(tag));
    try {
      await built.build();
      return built;
    } catch (error) {
      await built.cleanup();
      throw error;
    }
  }

  node(name: NodeName): LabNode {
    return name === 'A' ? this.a : this.b;
  }

  /**
   * Runs a command on a node: inside its network namespace, with its
   * /etc/hosts, its own hostname and the lab's TMPDIR (unless `options.env`
   * names another). Other options go to execa unchanged.
   */
  run(node: NodeName, command: string, args: readonly string[], options: ExecaOptions = {}) {
    const { namespace, hostname } = this.node(node);
    return execa(
      'ip',
      [
        'netns',
        'exec',
        namespace,
        'unshare',
        '--uts',
        'sh',
        '-c',
        'hostname "$1" && shift && exec "$@"',
        'sh',
        hostname,
        command,
        ...args,
      ],
      { ...options, env: { TMPDIR: this.tmp, ...options.env } },
    );
  }

  /** Pids of every process still running inside the node's namespace. */
  async pids(node: NodeName): Promise<number[]> {
    const { stdout } = await execa('ip', ['netns', 'pids', this.node(node).namespace], {
      timeout: STEP_TIMEOUT_MS,
    });
    return stdout.split('\n').filter(Boolean).map(Number);
  }

  /** `ss -tnpH`: the node's TCP connections with their processes, one per line. */
  async tcpConnections(node: NodeName): Promise<string[]> {
    const { stdout } = await execa(
      'ip',
      ['netns', 'exec', this.node(node).namespace, 'ss', '-tnpH'],
      {
        timeout: STEP_TIMEOUT_MS,
      },
    );
    return stdout.split('\n').filter(Boolean);
  }

  /** Bytes sent on an interface of a node so far (the kernel's tx counter). */
  async txBytes(node: NodeName, iface: string): Promise<number> {
    const { stdout } = await execa(
      'ip',
      [
        'netns',
        'exec',
        this.node(node).namespace,
        'cat',
        `/sys/class/net/${iface}/statistics/tx_bytes`,
      ],
      { timeout: STEP_TIMEOUT_MS },
    );
    return Number(stdout.trim());
  }

  /**
   * Kills every process left on both nodes (a job a test abandoned on
   * purpose) and waits until none remain, so the next job starts clean.
   */
  async stopProcesses(timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const pids = [...(await this.pids('A')), ...(await this.pids('B'))];
      if (pids.length === 0) return;
      if (Date.now() > deadline) {
        throw new Error(
          `two-node lab: processes ${pids.join(' ')} outlived SIGKILL for ${timeoutMs} ms`,
        );
      }
      for (const pid of pids) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // exited between the listing and the kill
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** Removes both namespaces (killing what runs in them), their /etc/netns files and the lab's TMPDIR. */
  async cleanup(): Promise<void> {
    await this.lab.cleanup();
    rmSync(this.tmp, { recursive: true, force: true });
  }

  /**
   * Gives both nodes' /etc/hosts these lines after the hostnames, as a
   * cluster's DNS would serve the same names to every node (e.g. a name for
   * the master's data address); an empty list restores the plain file. It
   * applies to every command started afterwards.
   */
  setExtraHosts(lines: readonly string[]): void {
    for (const node of ['A', 'B'] as const) this.lab.setHosts(node, etcHosts(lines));
  }

  private async build(): Promise<void> {
    await this.step(this.lab.host('A', etcHosts([])));
    await this.step(this.lab.host('B', etcHosts([])));

    await this.step(this.lab.link('A', this.a.dataIface, 'B', this.b.dataIface));
    await this.step(this.lab.link('A', this.a.mgmtIface, 'B', this.b.mgmtIface));
    for (const node of [this.a, this.b]) {
      await this.step(
        this.lab.addr(node.name, node.dataIface, `${node.dataAddress}/${DATA_PREFIX_LENGTH}`),
      );
      await this.step(this.lab.addr(node.name, node.mgmtIface, `${node.mgmtAddress}/24`));
      // tbf shapes egress only, so both ends are limited to make the link slow both ways.
      await this.step(
        execa(
          'tc',
          [
            ...['-n', node.namespace, 'qdisc', 'add', 'dev', node.mgmtIface, 'root', 'tbf'],
            ...['rate', `${MANAGEMENT_RATE_MBIT}mbit`, 'burst', '64kb', 'latency', '100ms'],
          ],
          { timeout: STEP_TIMEOUT_MS },
        ).then(() => undefined),
      );
      await this.dockerBridge(node);
    }
  }

  /**
   * docker0 with one attached "container" veth: an empty bridge has no
   * carrier, and a host running containers shows docker0 up, the case where
   * heuristics that do not exclude it can pick it.
   */
  private async dockerBridge(node: LabNode): Promise<void> {
    const ip = (...args: string[]) => this.step(this.lab.ip(node.name, ...args));
    await ip('link', 'add', 'docker0', 'type', 'bridge');
    await ip('link', 'add', 'veth0d1c', 'type', 'veth', 'peer', 'name', 'ctr0');
    await ip('link', 'set', 'veth0d1c', 'master', 'docker0');
    await ip('addr', 'add', DOCKER_BRIDGE_CIDR, 'dev', 'docker0');
    for (const iface of ['docker0', 'veth0d1c', 'ctr0']) await ip('link', 'set', iface, 'up');
  }

  /** Bounds one setup step in time: `ip` and `tc` should answer at once. */
  private async step(work: Promise<unknown>): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`two-node lab: a setup step took over ${STEP_TIMEOUT_MS} ms`)),
        STEP_TIMEOUT_MS,
      );
    });
    try {
      await Promise.race([work, deadline]);
    } finally {
      clearTimeout(timer);
    }
  }
}

/** Both nodes' /etc/hosts: each hostname on its management address, then `extra`. */
function etcHosts(extra: readonly string[]): string {
  return [
    '127.0.0.1 localhost',
    '::1 localhost ip6-localhost ip6-loopback',
    `${NODES.A.mgmtAddress} ${NODES.A.hostname}`,
    `${NODES.B.mgmtAddress} ${NODES.B.hostname}`,
    ...extra,
    '',
  ].join('\n');
}

/**
 * For scripts (demo, bench) rather than tests: on SIGINT, SIGTERM or SIGHUP
 * removes the lab, then exits 128 + N as a shell does. Returns the function
 * that removes the handlers.
 */
export function cleanupOnSignal(lab: TwoNodeLab): () => void {
  const handlers = new Map<NodeJS.Signals, () => void>();
  const numbers: Partial<Record<NodeJS.Signals, number>> = { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 };
  let cleaning = false;
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    // Stays installed while cleaning: a second Ctrl-C must not kill the
    // process halfway through removing the namespaces.
    const handler = () => {
      if (cleaning) return;
      cleaning = true;
      process.stderr.write(`\n${signal}: removing the lab's namespaces\n`);
      lab.cleanup().finally(() => process.exit(128 + (numbers[signal] ?? 0)));
    };
    handlers.set(signal, handler);
    process.on(signal, handler);
  }
  return () => {
    for (const [signal, handler] of handlers) process.off(signal, handler);
  };
}
