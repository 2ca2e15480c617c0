/**
 * A real Docker engine for the Docker tier (shared/LAB.md "A real Docker
 * engine"): Debian 12's dockerd (20.10), started by the tier and stopped by
 * it, in a network namespace of its own. Its docker0, its bridges, its
 * iptables chains and the FORWARD policy it sets to DROP all live in that
 * namespace, so the host's network is left exactly as found, and nothing it
 * runs can reach beyond it: the image build is offline for certain (its apt
 * package comes from a mirror the tier serves from a cache it fills first).
 *
 * Addresses: docker0 198.19.250.1/24 and every network Docker allocates from
 * 198.19.0.0/16 (never Docker's default 172.17/16); the compose template's own
 * subnets are 198.18.1.0/24 and 198.18.2.0/24.
 *
 * `ip netns exec` would remount /sys and hide the cgroup hierarchies dockerd
 * needs, so dockerd enters the namespace with nsenter and a mount namespace of
 * its own, in which a fresh sysfs (the namespace's interfaces) is mounted
 * with the host's /sys/fs/cgroup bound back on top of it.
 *
 * The data root lives in the lab cache ($NCCL_RUN_LAB_CACHE, default
 * /var/cache/nccl-run-lab) so imported and built images survive between runs;
 * one engine at a time uses it (flock), a second tier run waits.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, openSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Options as ExecaOptions, execa } from 'execa';
import { netnsUnavailable } from './netns.js';
import { firstMissing } from './tier.js';

/** Debian 12's CLI: it builds with BuildKit without buildx (the newer /usr/local/bin/docker asks for buildx). */
export const DOCKER_CLI = '/usr/bin/docker';
const DOCKERD = '/usr/sbin/dockerd';

export const DOCKER0_ADDRESS = '198.19.250.1';
const BIP = `${DOCKER0_ADDRESS}/24`;
const ADDRESS_POOL = 'base=198.19.0.0/16,size=24';

export const LAB_CACHE = process.env.NCCL_RUN_LAB_CACHE ?? '/var/cache/nccl-run-lab';

/** Why the Docker tier cannot run here, or null. */
export const dockerUnavailable: string | null =
  netnsUnavailable ??
  firstMissing([
    [DOCKERD, `${DOCKERD} is missing (apt-get install docker.io; .ci/run installs it)`],
    [DOCKER_CLI, `${DOCKER_CLI} (Debian's docker CLI, from docker.io) is missing`],
    ['/usr/bin/nsenter', '/usr/bin/nsenter (util-linux) is missing'],
  ]);

export class DockerEngine {
  /** The network namespace dockerd runs in: the "host" of every container. */
  readonly namespace: string;
  private readonly runDir: string;
  private readonly socket: string;
  private readonly dockerConfig: string;
  private daemon: ChildProcess | undefined;
  private daemonExit: Promise<void> | undefined;

  private constructor(composePlugins: string) {
    this.namespace = `ncr-docker-${process.pid}`;
    // The exec root holds containerd's socket: its path must stay well under 108 bytes.
    this.runDir = mkdtempSync(join(tmpdir(), 'ncr-docker-'));
    this.socket = join(this.runDir, 'docker.sock');
    this.dockerConfig = join(this.runDir, 'config');
    mkdirSync(this.dockerConfig);
    // The compose v2 plugin, found by the CLI in $DOCKER_CONFIG/cli-plugins: nothing is installed on the host.
    symlinkSync(composePlugins, join(this.dockerConfig, 'cli-plugins'));
  }

  /** Starts dockerd (waiting for the cache's lock, then for its socket to answer). */
  static async start(composePlugins: string): Promise<DockerEngine> {
    const engine = new DockerEngine(composePlugins);
    try {
      await engine.boot();
    } catch (error) {
      await engine.stop();
      throw error;
    }
    return engine;
  }

  private async boot(): Promise<void> {
    await execa('ip', ['netns', 'add', this.namespace]);
    await execa('ip', ['-n', this.namespace, 'link', 'set', 'lo', 'up']);
    const dataRoot = join(LAB_CACHE, 'docker');
    mkdirSync(dataRoot, { recursive: true });
    const cgroups = join(this.runDir, 'cgroup');
    const dockerd = [
      DOCKERD,
      `--data-root=${dataRoot}`,
      `--exec-root=${join(this.runDir, 'exec')}`,
      `--host=unix://${this.socket}`,
      `--pidfile=${join(this.runDir, 'dockerd.pid')}`,
      `--bip=${BIP}`,
      `--default-address-pool=${ADDRESS_POOL}`,
    ];
    const enter = [
      `mkdir -p ${cgroups}`,
      `mount --rbind /sys/fs/cgroup ${cgroups}`,
      'mount -t sysfs sysfs /sys',
      `mount --rbind ${cgroups} /sys/fs/cgroup`,
      `umount -l ${cgroups}`,
      'exec "$@"',
    ].join(' && ');
    const log = openSync(join(this.runDir, 'dockerd.log'), 'a');
    // The shell takes the cache's lock on a descriptor dockerd inherits, then
    // it, nsenter and unshare exec (no fork) down to dockerd: the child's pid
    // is dockerd's, and the lock lasts as long as dockerd.
    this.daemon = spawn(
      'sh',
      [
        '-c',
        'exec 9>"$1" && flock 9 && shift && exec "$@"',
        'sh',
        join(LAB_CACHE, 'docker.lock'),
        'nsenter',
        `--net=/run/netns/${this.namespace}`,
        'unshare',
        '--mount',
        '--propagation',
        'slave',
        'sh',
        '-c',
        enter,
        'sh',
        ...dockerd,
      ],
      { stdio: ['ignore', log, log] },
    );
    const daemon = this.daemon;
    this.daemonExit = new Promise((resolve) => daemon.once('exit', () => resolve()));
    let exited = false;
    void this.daemonExit.then(() => {
      exited = true;
    });
    // Observable state: the socket answers. The lock may be held by another run for minutes.
    for (;;) {
      if (exited) throw new Error(`dockerd exited at start; its log: ${this.logPath}`);
      const answer = await this.docker(['version', '--format', '{{.Server.Version}}'], {
        reject: false,
      });
      if (answer.exitCode === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    // What a run that died left behind in the cached data root.
    await this.removeContainersAndNetworks();
  }

  get logPath(): string {
    return join(this.runDir, 'dockerd.log');
  }

  /** The environment of every docker CLI call: this engine, the compose plugin, BuildKit. */
  get env(): Record<string, string> {
    return {
      PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin',
      HOME: process.env.HOME ?? '/root',
      DOCKER_HOST: `unix://${this.socket}`,
      DOCKER_CONFIG: this.dockerConfig,
      DOCKER_BUILDKIT: '1',
    };
  }

  docker(args: readonly string[], options: ExecaOptions = {}) {
    return execa(DOCKER_CLI, args, { env: this.env, extendEnv: false, ...options });
  }

  /** Runs a command in the engine's network namespace (the containers' host). */
  inNamespace(command: string, args: readonly string[], options: ExecaOptions = {}) {
    return execa('ip', ['netns', 'exec', this.namespace, command, ...args], options);
  }

  private async removeContainersAndNetworks(): Promise<void> {
    const listed = await this.docker(['ps', '-aq'], { reject: false });
    const ids = String(listed.stdout ?? '')
      .split('\n')
      .filter(Boolean);
    if (ids.length > 0) await this.docker(['rm', '-f', '-v', ...ids], { reject: false });
    await this.docker(['network', 'prune', '-f'], { reject: false });
  }

  /** Removes every container and network, stops dockerd, removes the namespace; safe to call twice. */
  async stop(): Promise<void> {
    const daemon = this.daemon;
    this.daemon = undefined;
    if (daemon && daemon.exitCode === null && daemon.signalCode === null) {
      await this.removeContainersAndNetworks();
      // The data root is a cache: what this run's builds replaced goes, the rest stays.
      await this.docker(['image', 'prune', '--force'], { reject: false });
      await this.docker(['builder', 'prune', '--force', '--keep-storage', '1GB'], {
        reject: false,
      });
      daemon.kill('SIGTERM');
      const killer = setTimeout(() => daemon.kill('SIGKILL'), 30_000);
      await this.daemonExit;
      clearTimeout(killer);
    }
    await execa('ip', ['netns', 'del', this.namespace], { reject: false });
    rmSync(this.runDir, { recursive: true, force: true });
  }
}
