/**
 * Pod YAML for real (shared/LAB.md "Kubernetes Pod YAML (podman)"): Debian
 * 12's podman 4.3 with netavark and aardvark-dns runs `podman kube play` in
 * a network namespace of the tier's own, so every bridge, veth, firewall
 * rule and DNS server netavark makes lives there, and nothing a pod runs can
 * reach beyond it (the namespace has no route out; the pod networks are
 * `--internal`).
 *
 * Every podman command enters the namespace with `nsenter --net`, not `ip
 * netns exec`: the latter remounts /sys, which hides the cgroup hierarchies,
 * and runc then fails with "no cgroup mount found in mountinfo". podman
 * reaches the namespace's links through netlink, so /sys need not show them;
 * only the byte counters of the bridges are read through `ip -n`.
 *
 * Its configuration is the tier's own, through CONTAINERS_CONF and
 * CONTAINERS_STORAGE_CONF: the sandbox drops CAP_SYS_RESOURCE, so podman's
 * default rlimits fail (`crun: setrlimit RLIMIT_NPROC: Operation not
 * permitted`) and `default_ulimits` sets ones this process may set; crun
 * 1.8 refuses the hybrid cgroup hierarchy, so runc with cgroupfs, and the
 * events go to a file (no journald). Networks, run state and volumes are in
 * RUN_STATE, made afresh by each run; the image store (graphroot) is in the lab cache
 * ($NCCL_RUN_LAB_CACHE/podman), so the imported image is reused between
 * runs. netavark keeps aardvark-dns' state in /run/containers/networks
 * whatever the configuration says, so one tier at a time uses podman
 * (a flock on the cache's podman.lock, held while the lab lives).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { type Options as ExecaOptions, execa } from 'execa';
import { CHECKOUT } from './debian-root.js';
import { DOCKER_CLI, DockerEngine, LAB_CACHE } from './docker-engine.js';
import { buildTrainImage, pytorchImage, TRAIN_BINARY, TRAIN_IMAGE } from './docker-images.js';
import { netnsUnavailable } from './netns.js';
import { firstMissing } from './tier.js';

const PODMAN = '/usr/bin/podman';
const DOCKER_DEBS = join(CHECKOUT, 'test', 'lab', 'docker-debs.sh');
/** What `podman kube play` needs beside podman, on Debian 12. */
const HELPERS = {
  '/usr/lib/podman/netavark': 'netavark',
  '/usr/lib/podman/aardvark-dns': 'aardvark-dns',
  '/usr/bin/runc': 'runc',
  '/usr/bin/catatonit': 'catatonit',
  '/usr/bin/nsenter': 'util-linux',
} as const;

/** Why podman cannot run pods here, or null. */
export const podmanUnavailable: string | null =
  netnsUnavailable ??
  firstMissing([
    [
      PODMAN,
      `${PODMAN} is missing (apt-get install podman netavark aardvark-dns catatonit runc; .ci/run installs them)`,
    ],
    ...Object.entries(HELPERS).map(
      ([path, pkg]) => [path, `${path} is missing (apt-get install ${pkg})`] as const,
    ),
  ]);

/**
 * podman's run state (run root, tmp_dir, volumes, networks): one fixed
 * folder, not one per run, since podman records these paths in its
 * database (in the cached static_dir) when it first makes it and then
 * prefers them to the configuration. The lock makes one run at a time its
 * user; start() and stop() remove it. conmon's attach sockets live under
 * its run root: keep the path short.
 */
const RUN_STATE = '/run/nccl-run-lab-podman';

/**
 * aardvark-dns's records, one file per network: under netavark's run
 * directory for root (seen here: podman 4.3 starts aardvark-dns with
 * --config /run/containers/networks/aardvark-dns, whatever the lab's
 * network_config_dir), not under RUN_STATE. A record whose
 * container's teardown did not remove it outlives the lab's run there, and
 * a later pod of the same name then resolves to the old address too (seen:
 * recreate-master-0 with three addresses, the workers dialling a dead one).
 */
const AARDVARK_DIR = '/run/containers/networks/aardvark-dns';

/** The rlimits pods get: CAP_SYS_RESOURCE is dropped here, so none above what this process has. */
const ULIMITS = ['nofile=20000:20000', 'nproc=32768:32768'];

export class PodmanLab {
  /** The network namespace podman runs in: the "node" every pod runs on. */
  readonly namespace: string;
  private readonly runDir: string;
  private lock: ChildProcess | undefined;
  /** The networks this lab made, by name. */
  private readonly networks = new Set<string>();

  private constructor() {
    this.namespace = `k8s${process.pid}`;
    // This run's configuration files and event log.
    this.runDir = mkdtempSync(join(tmpdir(), 'ncr-podman-'));
  }

  /** Takes the cache's lock (waiting for another run), makes the namespace and the configuration. */
  static async start(): Promise<PodmanLab> {
    const lab = new PodmanLab();
    try {
      await lab.boot();
    } catch (error) {
      await lab.stop();
      throw error;
    }
    return lab;
  }

  private async boot(): Promise<void> {
    const cache = join(LAB_CACHE, 'podman');
    mkdirSync(cache, { recursive: true });
    // The lock lasts as long as this `flock … cat`: until stop(), or until
    // this process dies and cat reads the end of its stdin.
    const lock = spawn('flock', [join(LAB_CACHE, 'podman.lock'), 'sh', '-c', 'echo; exec cat'], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    this.lock = lock;
    await new Promise<void>((resolve, reject) => {
      lock.stdout?.once('data', () => resolve());
      lock.once('exit', (code) => reject(new Error(`flock on podman.lock exited (${code})`)));
    });
    // What a run that died left there: its networks, its containers' run state.
    rmSync(RUN_STATE, { recursive: true, force: true });
    const dir = (name: string) => {
      const path = join(RUN_STATE, name);
      mkdirSync(path, { recursive: true });
      return path;
    };
    writeFileSync(
      this.containersConf,
      [
        '[containers]',
        `default_ulimits = ${JSON.stringify(ULIMITS)}`,
        '[network]',
        'network_backend = "netavark"',
        `network_config_dir = "${dir('networks')}"`,
        '[engine]',
        'runtime = "runc"',
        'cgroup_manager = "cgroupfs"',
        'events_logger = "file"',
        `events_logfile_path = "${join(this.runDir, 'events.log')}"`,
        `tmp_dir = "${dir('tmp')}"`,
        `volume_path = "${dir('volumes')}"`,
        `static_dir = "${join(cache, 'libpod')}"`,
        '',
      ].join('\n'),
    );
    writeFileSync(
      this.storageConf,
      [
        '[storage]',
        'driver = "overlay"',
        `graphroot = "${join(cache, 'storage')}"`,
        `runroot = "${dir('run')}"`,
        '',
      ].join('\n'),
    );
    await execa('ip', ['netns', 'add', this.namespace]);
    await execa('ip', ['-n', this.namespace, 'link', 'set', 'lo', 'up']);
    // What a run that died left in the cached store: its pods and containers.
    await this.podman(['pod', 'rm', '--all', '--force'], { reject: false });
    await this.podman(['rm', '--all', '--force'], { reject: false });
    await this.podman(['volume', 'rm', '--all', '--force'], { reject: false });
  }

  private get containersConf(): string {
    return join(this.runDir, 'containers.conf');
  }

  private get storageConf(): string {
    return join(this.runDir, 'storage.conf');
  }

  /** The environment of every podman call: this lab's configuration and nothing else. */
  get env(): Record<string, string> {
    return {
      PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin',
      HOME: process.env.HOME ?? '/root',
      CONTAINERS_CONF: this.containersConf,
      CONTAINERS_STORAGE_CONF: this.storageConf,
    };
  }

  /** `podman ARGS` in the lab's namespace. */
  podman(args: readonly string[], options: ExecaOptions = {}) {
    return execa('nsenter', [`--net=/run/netns/${this.namespace}`, PODMAN, ...args], {
      env: this.env,
      extendEnv: false,
      ...options,
    });
  }

  /** argv of a shell pipeline stage that is this lab's podman (for `docker save | podman load`). */
  podmanArgv(args: readonly string[]): string[] {
    return ['nsenter', `--net=/run/netns/${this.namespace}`, PODMAN, ...args];
  }

  /** Runs a command in the lab's namespace (the node's network, where the bridges are). */
  inNamespace(command: string, args: readonly string[], options: ExecaOptions = {}) {
    return execa('ip', ['netns', 'exec', this.namespace, command, ...args], options);
  }

  /** The links of the lab's namespace, by name. */
  async links(): Promise<string[]> {
    const { stdout } = await execa('ip', ['-n', this.namespace, '-j', 'link', 'show']);
    return (JSON.parse(stdout) as { ifname: string }[]).map((link) => link.ifname);
  }

  /** A podman network: an internal bridge (no way out) on the given subnet, with or without DNS. */
  async network(name: string, subnet: string, { dns }: { dns: boolean }): Promise<string> {
    // No network of this name exists in this run's fresh configuration: records under it are a past run's.
    rmSync(join(AARDVARK_DIR, name), { force: true });
    this.networks.add(name);
    await this.podman([
      'network',
      'create',
      '--internal',
      '--subnet',
      subnet,
      ...(dns ? [] : ['--disable-dns']),
      name,
    ]);
    const { stdout } = await this.podman([
      'network',
      'inspect',
      '--format',
      '{{.NetworkInterface}}',
      name,
    ]);
    return String(stdout).trim();
  }

  /** The id of the pod's infra container, found with `ps` (see podAddresses). */
  async infraContainer(pod: string): Promise<string> {
    const { stdout } = await this.podman([
      'ps',
      '--all',
      '--pod',
      '--format',
      '{{.ID}} {{.PodName}} {{.IsInfra}}',
    ]);
    const infra = String(stdout)
      .split('\n')
      .map((line) => line.split(' '))
      .find(([, name, isInfra]) => name === pod && isInfra === 'true')?.[0];
    if (infra === undefined) throw new Error(`no infra container of pod ${pod}`);
    return infra;
  }

  /**
   * The pod's addresses, by network name, as podman inspect gives its infra
   * container's. The infra container is found with `ps`: `pod inspect`
   * waits for the pod's lock, which kube play holds while the pod's init
   * containers run (a pre-flight that waits for this very pod's network-status).
   */
  async podAddresses(pod: string): Promise<Record<string, string>> {
    const infra = await this.infraContainer(pod);
    const { stdout } = await this.podman([
      'inspect',
      '--format',
      '{{json .NetworkSettings.Networks}}',
      infra,
    ]);
    const networks = JSON.parse(String(stdout)) as Record<string, { IPAddress: string }>;
    return Object.fromEntries(
      Object.entries(networks).map(([name, network]) => [name, network.IPAddress]),
    );
  }

  /** Removes every pod, container and network, kills what is left in the namespace, removes it; safe to call twice. */
  async stop(): Promise<void> {
    if (this.lock !== undefined) {
      await this.podman(['pod', 'rm', '--all', '--force', '--time', '0'], { reject: false });
      await this.podman(['rm', '--all', '--force', '--time', '0'], { reject: false });
      await this.podman(['network', 'prune', '--force'], { reject: false });
      for (const name of this.networks) rmSync(join(AARDVARK_DIR, name), { force: true });
      // Secrets that kube play stored (kind: Secret) live in the cached
      // database, and so do the volumes it made for them (their files in RUN_STATE).
      await this.podman(['secret', 'rm', '--all'], { reject: false });
      await this.podman(['volume', 'rm', '--all', '--force'], { reject: false });
      // conmon runs `podman container cleanup` when a container ends, on this
      // run's folders: let those finish, or they make the folders again.
      const deadline = Date.now() + 15_000;
      while (processesUsing(RUN_STATE).length > 0 && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 100));
      // aardvark-dns outlives its last network by a moment; anything else is stuck.
      const { stdout } = await execa('ip', ['netns', 'pids', this.namespace], { reject: false });
      for (const pid of String(stdout).split('\n').filter(Boolean)) {
        try {
          process.kill(Number(pid), 'SIGKILL');
        } catch {
          // already gone
        }
      }
      await execa('ip', ['netns', 'del', this.namespace], { reject: false });
      // podman reads a missing tmp_dir as a reboot: the next run starts clean.
      rmSync(RUN_STATE, { recursive: true, force: true });
    }
    rmSync(this.runDir, { recursive: true, force: true });
    this.lock?.kill('SIGTERM');
    this.lock = undefined;
  }
}

/** Pids of the processes whose command line names `path` (podman's, conmon's). */
function processesUsing(path: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(path)) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/**
 * What goes into the Docker tier's image: the build's inputs in this checkout
 * and the tier's recipes, besides TRAIN_BINARY (release/ is git-ignored).
 */
const IMAGE_INPUTS = [
  'Dockerfile.example',
  '.dockerignore',
  'test/lab/python',
  'test/lab/docker-images.ts',
  'test/lab/docker-debs.sh',
];

/** A hash of the image's inputs (file names and contents), TRAIN_BINARY's content and the lab root. */
async function imageKey(labRoot: string): Promise<string> {
  const { stdout } = await execa(
    'git',
    ['ls-files', '--cached', '--others', '--exclude-standard', '-z', '--', ...IMAGE_INPUTS],
    { cwd: CHECKOUT },
  );
  const digest = createHash('sha256').update(`${labRoot}\0`);
  const binary = relative(CHECKOUT, TRAIN_BINARY);
  for (const file of [...String(stdout).split('\0').filter(Boolean).sort(), binary]) {
    try {
      digest
        .update(`${file}\0`)
        .update(readFileSync(join(CHECKOUT, file)))
        .update('\0');
    } catch {
      // listed but deleted in the work tree, or no release built: its absence is part of the key
    }
  }
  return digest.digest('hex').slice(0, 12);
}

/**
 * The Kubernetes template's two images in the lab's store, under the names
 * the template gives them (`names`):
 * - the training image: the Docker tier's "PyTorch image" (the Debian 13 lab
 *   root, torch 2.6), with neither nccl-run nor Node.js nor tini in it;
 * - the nccl-run image its init container copies nccl-run and tini-static
 *   from: Dockerfile.example on that image (`nccl-run-train:latest`, the
 *   Docker tier's; on a cluster, the same file on a slim base).
 * The pair is tagged `localhost/nccl-run-lab/train:KEY` (KEY: imageKey) for
 * the nccl-run image. When the store lacks KEY, the Docker tier's helpers
 * build both on a Docker engine of their own (cached in that engine's data
 * root) and `docker save | podman load` moves them, sharing their layers.
 * Returns the keyed tag and whether it had to be made.
 */
export async function jobImages(
  lab: PodmanLab,
  labRoot: string,
  names: { training: string; ncclRun: string },
): Promise<{ tag: string; made: boolean }> {
  const tag = `localhost/nccl-run-lab/train:${await imageKey(labRoot)}`;
  let made = false;
  if ((await lab.podman(['image', 'exists', tag], { reject: false })).exitCode !== 0) {
    made = true;
    const debs = execFileSync('bash', [DOCKER_DEBS, labRoot], { encoding: 'utf8' }).trim();
    const engine = await DockerEngine.start(join(debs, 'cli-plugins'));
    try {
      const pytorch = await pytorchImage(engine, labRoot);
      await buildTrainImage(engine, pytorch, debs);
      await execa(
        'bash',
        [
          '-c',
          'set -o pipefail; d=$1 i=$2 p=$3 && shift 3 && "$d" save "$i" "$p" | "$@"',
          'bash',
          DOCKER_CLI,
          TRAIN_IMAGE,
          pytorch,
          ...lab.podmanArgv(['load', '--quiet']),
        ],
        { env: { ...engine.env, ...lab.env }, extendEnv: false },
      );
      // podman load names docker save's `nccl-run-train:latest` localhost/nccl-run-train:latest.
      await lab.podman(['tag', `localhost/${pytorch}`, trainingTag(tag)]);
    } finally {
      await engine.stop();
    }
    await lab.podman(['tag', `localhost/${TRAIN_IMAGE}`, tag]);
    // Earlier keys' images: the store keeps one.
    const { stdout } = await lab.podman([
      'images',
      '--format',
      '{{.Repository}}:{{.Tag}}',
      'localhost/nccl-run-lab/train',
    ]);
    for (const old of String(stdout)
      .split('\n')
      .filter((name) => name && name !== tag && name !== trainingTag(tag)))
      await lab.podman(['rmi', '--force', old], { reject: false });
  }
  await lab.podman(['tag', tag, names.ncclRun]);
  await lab.podman(['tag', trainingTag(tag), names.training]);
  return { tag, made };
}

/** The training image's keyed tag beside the nccl-run image's. */
const trainingTag = (tag: string) => tag.replace('/train:', '/train:pytorch-');
