/**
 * Issue 3's choices on real interfaces: the built CLI (bin/nccl-run.js) runs
 * inside network namespaces built to look like the hosts users have, and its
 * `explain --json`, `env --format json` and launch are read back. Nothing
 * here connects anywhere: `explain` and `env` never verify, and the one
 * launch runs with `--verify none` and a stand-in torchrun. DNS, where a
 * name misses /etc/hosts, goes to the namespace's own loopback, where
 * nothing listens (as in resolve-master.test.ts).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { fixture, readReport, removeReports, reportPath } from '../fixtures/fixture-report.js';
import { Lab, netnsUnavailable } from '../lab/netns.js';
import { tier } from '../lab/tier.js';

const BIN = fileURLToPath(new URL('../../bin/nccl-run', import.meta.url));
const BUILT = fileURLToPath(new URL('../../dist/bin/nccl-run.cjs', import.meta.url));

/** What `explain --json` prints (SPEC "Outputs"), as far as these tests read it. */
interface Explained {
  master: { host: string; addresses: string[]; port: number; source: string } | null;
  decision: {
    interface: string;
    address: string;
    family: 'ipv4' | 'ipv6';
    strategy: string;
    reason: string;
  } | null;
  trace: { strategy: string; outcome: 'picked' | 'skipped' | 'fatal'; reason: string }[];
  env: Record<string, string>;
  kept: Record<string, string>;
  warnings: string[];
  command: string[];
}

interface Run {
  exitCode: number;
  stdout: string;
  stderr: string;
}

// Two nodes of one data subnet, named as two hardware generations name them.
const DATA_A = '198.18.30.1';
const DATA_B = '198.18.30.2';
// Docker's default range stood in for by benchmarking space, the same on every node.
const DOCKER = '198.19.0.1/16';
// The master behind a router: its subnet and the node's are different.
const FAR_MASTER = '198.18.31.1';
const V6_MASTER = '2001:db8:30::1';
// A Kubernetes pod: the master pod on the pod network, net1 the Multus network.
const POD_MASTER = '198.18.33.1';
const POD_NET1 = '198.18.34.2';

/** Every namespace's resolver: files first, then a DNS server that is its own loopback. */
const NSSWITCH = 'hosts: files dns\n';
const RESOLV = 'nameserver 127.0.0.1\noptions timeout:1 attempts:1\n';
const HOSTS = [
  '127.0.0.1 localhost',
  '::1 localhost ip6-localhost',
  `${DATA_A} trainer-0`,
  `${DATA_B} trainer-1`,
  '',
].join('\n');

tier('nccl-run resolves on real interfaces', netnsUnavailable, () => {
  const lab = new Lab('rcli');
  // No nccl-run.env of the checkout's can leak in: SPEC reads ./nccl-run.env by default.
  const cwd = mkdtempSync(join(tmpdir(), 'ncr-resolve-cli-'));

  async function host(name: string): Promise<void> {
    await lab.host(name, HOSTS);
    writeFileSync(`/etc/netns/${lab.ns(name)}/nsswitch.conf`, NSSWITCH);
    writeFileSync(`/etc/netns/${lab.ns(name)}/resolv.conf`, RESOLV);
  }

  /** A docker0 bridge that is up: a container's veth end is plugged into it, as docker does. */
  async function docker(name: string): Promise<void> {
    await lab.ip(name, 'link', 'add', 'docker0', 'type', 'bridge');
    await lab.ip(name, 'link', 'add', 'veth1c2d3e', 'type', 'veth', 'peer', 'name', 'ctr-eth0');
    await lab.ip(name, 'link', 'set', 'veth1c2d3e', 'master', 'docker0');
    for (const iface of ['docker0', 'veth1c2d3e', 'ctr-eth0']) {
      await lab.ip(name, 'link', 'set', iface, 'up');
    }
    await lab.addr(name, 'docker0', DOCKER);
  }

  beforeAll(async () => {
    if (!existsSync(BUILT)) throw new Error(`${BUILT} is missing: run npm run build first`);
    // a and b: one data subnet, different interface names, docker0 on both.
    await host('a');
    await host('b');
    await lab.link('a', 'ens3f0', 'b', 'enp65s0');
    await lab.addr('a', 'ens3f0', `${DATA_A}/24`);
    await lab.addr('b', 'enp65s0', `${DATA_B}/24`);
    await docker('a');
    await docker('b');
    // m - r - n: the master m on 198.18.31.0/24, node n on 198.18.32.0/24, both routed through r.
    for (const name of ['m', 'r', 'n']) await host(name);
    await lab.link('m', 'eth0', 'r', 'to-m');
    await lab.link('r', 'to-n', 'n', 'data0');
    await lab.addr('m', 'eth0', `${FAR_MASTER}/24`);
    await lab.addr('r', 'to-m', '198.18.31.254/24');
    await lab.addr('r', 'to-n', '198.18.32.254/24');
    await lab.addr('n', 'data0', '198.18.32.2/24');
    await lab.ip('m', 'route', 'add', 'default', 'via', '198.18.31.254');
    await lab.ip('n', 'route', 'add', 'default', 'via', '198.18.32.254');
    // n's management network: sorts before data0 by name, so only the route can pick data0.
    await host('o');
    await lab.link('n', 'adm0', 'o', 'adm0');
    await lab.addr('n', 'adm0', '203.0.113.2/24');
    await lab.addr('o', 'adm0', '203.0.113.1/24');
    // p and q: an IPv6-only data network.
    await host('p');
    await host('q');
    await lab.link('p', 'ib-data', 'q', 'data6');
    await lab.addr('p', 'ib-data', `${V6_MASTER}/64`);
    await lab.addr('q', 'data6', '2001:db8:30::2/64');
    // k: a pod with Multus' second network. Its pod network eth0 holds the
    // master pod's subnet (where the Service name resolves); net1 is the fast one.
    await host('k');
    await host('km');
    await lab.link('k', 'eth0', 'km', 'eth0');
    await lab.addr('k', 'eth0', '198.18.33.2/24');
    await lab.addr('km', 'eth0', `${POD_MASTER}/24`);
    await lab.link('k', 'net1', 'km', 'net1');
    await lab.addr('k', 'net1', `${POD_NET1}/24`);
  });

  afterAll(async () => {
    await lab.cleanup();
    rmSync(cwd, { recursive: true, force: true });
    removeReports();
  });

  /** The CLI on host `on`, in an environment of only PATH and `env`. */
  async function ncclRun(on: string, args: string[], env: Record<string, string> = {}) {
    const result = await lab.exec(on, BIN, args, {
      cwd,
      env: { PATH: process.env.PATH, ...env },
      extendEnv: false,
      reject: false,
      stdin: 'ignore',
      timeout: 15_000,
    });
    return {
      exitCode: result.exitCode ?? -1,
      stdout: String(result.stdout),
      stderr: String(result.stderr),
    } satisfies Run;
  }

  async function explain(on: string, args: string[], env: Record<string, string> = {}) {
    const run = await ncclRun(on, ['explain', '--json', '--log-level', 'silent', ...args], env);
    expect(run, run.stderr).toMatchObject({ exitCode: 0 });
    return JSON.parse(run.stdout) as Explained;
  }

  /** The verdict column of explain's table for one interface. */
  async function verdict(on: string, iface: string, args: string[]): Promise<string> {
    const run = await ncclRun(on, ['explain', '--log-level', 'silent', ...args]);
    expect(run.exitCode, run.stderr).toBe(0);
    const row = run.stdout.split('\n').find((line) => line.trim().split(/\s+/)[0] === iface);
    if (row === undefined) throw new Error(`no row for ${iface} in:\n${run.stdout}`);
    return row.split(/\s{2,}/).at(-1) ?? '';
  }

  /** A real launch, of a stand-in torchrun that reports what it got (undefined: never started). */
  async function launch(on: string, args: string[]) {
    const report = reportPath();
    const run = await ncclRun(
      on,
      ['--verify', 'none', '--torchrun', fixture('report-launcher.js'), ...args],
      { FIXTURE_REPORT: report },
    );
    return { ...run, report: readReport(report) };
  }

  const job = (rank: number, master: string) => [
    '--nnodes',
    '2',
    '--node_rank',
    String(rank),
    '--master_addr',
    master,
    '--master_port',
    '29500',
    'train.py',
  ];

  it('gives each node of one subnet its own interface name, by subnet', async () => {
    const onA = await explain('a', job(0, DATA_A));
    const onB = await explain('b', job(1, DATA_A));
    expect(onA.decision).toMatchObject({
      interface: 'ens3f0',
      address: DATA_A,
      family: 'ipv4',
      strategy: 'subnet',
    });
    expect(onB.decision).toMatchObject({
      interface: 'enp65s0',
      address: DATA_B,
      family: 'ipv4',
      strategy: 'subnet',
    });
    expect(onA.env).toEqual({
      NCCL_SOCKET_IFNAME: '=ens3f0',
      GLOO_SOCKET_IFNAME: 'ens3f0',
      TP_SOCKET_IFNAME: 'ens3f0',
      NCCL_SOCKET_FAMILY: 'AF_INET',
      PET_LOCAL_ADDR: DATA_A,
    });
    expect(onB.env).toEqual({
      NCCL_SOCKET_IFNAME: '=enp65s0',
      GLOO_SOCKET_IFNAME: 'enp65s0',
      TP_SOCKET_IFNAME: 'enp65s0',
      NCCL_SOCKET_FAMILY: 'AF_INET',
      PET_LOCAL_ADDR: DATA_B,
    });

    // `env --format json` prints the same variables, and the launched torchrun gets them.
    const envOnB = await ncclRun('b', [
      'env',
      '--format',
      'json',
      '--log-level',
      'silent',
      ...job(1, DATA_A),
    ]);
    expect(envOnB.exitCode, envOnB.stderr).toBe(0);
    expect(JSON.parse(envOnB.stdout)).toEqual(onB.env);
    const launched = await launch('b', ['--log-level', 'silent', ...job(1, DATA_A)]);
    expect(launched.exitCode, launched.stderr).toBe(0);
    expect(launched.report?.env).toMatchObject(onB.env);
    expect(launched.report?.argv).toEqual(job(1, DATA_A));
  });

  it('reaches a master behind a router by the route strategy', async () => {
    const onN = await explain('n', job(1, FAR_MASTER));
    expect(onN.decision).toMatchObject({
      interface: 'data0',
      address: '198.18.32.2',
      strategy: 'route',
    });
    expect(onN.trace.map((step) => [step.strategy, step.outcome])).toEqual([
      ['explicit', 'skipped'],
      ['local', 'skipped'],
      ['multus', 'skipped'],
      ['subnet', 'skipped'],
      ['route', 'picked'],
    ]);
    expect(onN.trace[3]?.reason).toContain(FAR_MASTER);
    // The kernel's answer, gateway included, not a guess from the interface list.
    expect(onN.trace[4]?.reason).toContain('198.18.32.254');
    expect(onN.env.NCCL_SOCKET_IFNAME).toBe('=data0');
    // Control: without the route, the fallback would have taken the management network.
    const bySpeed = await explain('n', ['--strategy', 'speed', ...job(1, FAR_MASTER)]);
    expect(bySpeed.decision).toMatchObject({ interface: 'adm0', strategy: 'speed' });
    // The master's own node finds it by subnet: its address is the host's own.
    expect((await explain('m', job(0, FAR_MASTER))).decision).toMatchObject({
      interface: 'eth0',
      strategy: 'subnet',
    });
  });

  it('never chooses a docker0 bridge that holds the same address on every node', async () => {
    for (const [on, data] of [
      ['a', 'ens3f0'],
      ['b', 'enp65s0'],
    ] as const) {
      const shape = job(on === 'a' ? 0 : 1, DATA_A);
      const explained = await explain(on, shape);
      expect(explained.decision?.interface).toBe(data);
      expect(await verdict(on, 'docker0', shape)).toBe('excluded (prefix docker)');
      // Without a master to follow, the fastest-interface fallback still passes it by.
      const bySpeed = await explain(on, ['--strategy', 'speed', ...shape]);
      expect(bySpeed.decision).toMatchObject({ interface: data, strategy: 'speed' });
    }
    // The bridge is up with a usable address: the default exclude is what keeps it out.
    expect(await verdict('a', 'docker0', ['--no-default-excludes', ...job(0, DATA_A)])).toBe(
      'usable',
    );
  });

  it('resolves a master named in the node’s /etc/hosts and uses its address', async () => {
    const onB = await explain('b', job(1, 'trainer-0'));
    expect(onB.master).toMatchObject({ host: 'trainer-0', addresses: [DATA_A], port: 29500 });
    expect(onB.decision).toMatchObject({ interface: 'enp65s0', strategy: 'subnet' });
  });

  it('keeps a NCCL_SOCKET_IFNAME the user set, and replaces it with --force', async () => {
    const user = { NCCL_SOCKET_IFNAME: 'enp65s0' };
    const kept = await explain('b', job(1, DATA_A), user);
    expect(kept.kept).toEqual(user);
    expect(kept.env).not.toHaveProperty('NCCL_SOCKET_IFNAME');
    expect(kept.env).toMatchObject({ GLOO_SOCKET_IFNAME: 'enp65s0' });
    expect(kept.decision).toMatchObject({ interface: 'enp65s0', strategy: 'explicit' });
    const envKept = await ncclRun(
      'b',
      ['env', '--format', 'json', '--log-level', 'silent', ...job(1, DATA_A)],
      user,
    );
    expect(envKept.exitCode, envKept.stderr).toBe(0);
    expect(JSON.parse(envKept.stdout)).not.toHaveProperty('NCCL_SOCKET_IFNAME');

    const forced = await explain('b', ['--force', ...job(1, DATA_A)], user);
    expect(forced.kept).toEqual({});
    expect(forced.env).toMatchObject({
      NCCL_SOCKET_IFNAME: '=enp65s0',
      GLOO_SOCKET_IFNAME: 'enp65s0',
    });
    expect(forced.warnings.join('\n')).toContain('NCCL_SOCKET_IFNAME');
  });

  it('keeps a prefix NCCL_SOCKET_IFNAME as NCCL reads it, giving Gloo its first usable match', async () => {
    // NCCL matches `enp` as a prefix; Gloo needs the one exact name it stands for here.
    const user = { NCCL_SOCKET_IFNAME: 'enp' };
    const kept = await explain('b', job(1, DATA_A), user);
    expect(kept.kept).toEqual(user);
    expect(kept.decision).toMatchObject({ interface: 'enp65s0', strategy: 'explicit' });
    expect(kept.env).toMatchObject({ GLOO_SOCKET_IFNAME: 'enp65s0', TP_SOCKET_IFNAME: 'enp65s0' });
  });

  it('follows an IPv6 master onto an IPv6-only data network', async () => {
    const onQ = await explain('q', job(1, V6_MASTER));
    expect(onQ.decision).toMatchObject({
      interface: 'data6',
      address: '2001:db8:30::2',
      family: 'ipv6',
      strategy: 'subnet',
    });
    expect(onQ.master?.addresses).toEqual([V6_MASTER]);
    expect(onQ.env).toEqual({
      NCCL_SOCKET_IFNAME: '=data6',
      GLOO_SOCKET_IFNAME: 'data6',
      TP_SOCKET_IFNAME: 'data6',
      NCCL_SOCKET_FAMILY: 'AF_INET6',
      PET_LOCAL_ADDR: '2001:db8:30::2',
    });
  });

  it('exits 69 listing the interfaces when the explicit interface does not exist', async () => {
    const text = await ncclRun('a', ['explain', '--iface', 'nope', ...job(0, DATA_A)]);
    expect(text.exitCode).toBe(69);
    // explain prints what it learned, the table among it, and the one line goes to stderr.
    expect(text.stdout).toContain('Error      (exit 69) --iface nope is not usable');
    expect(text.stderr).toContain('--iface nope is not usable');
    const rows = text.stdout.split('\n').map((line) => line.trim().split(/\s+/)[0]);
    expect(rows).toEqual(
      expect.arrayContaining(['lo', 'ens3f0', 'docker0', 'veth1c2d3e', 'ctr-eth0']),
    );

    const json = await launch('a', ['--iface', 'nope', '--log-format', 'json', ...job(0, DATA_A)]);
    expect(json.exitCode).toBe(69);
    expect(json.report).toBeUndefined();
    const record = json.stderr
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { level: number; msg: string; details?: string[] })
      .find((line) => line.level >= 50);
    expect(record?.msg).toContain('--iface nope is not usable');
    const listed = (record?.details ?? []).map((line) => line.trim().split(/\s+/)[0]);
    expect(listed).toEqual(
      expect.arrayContaining(['lo', 'ens3f0', 'docker0', 'veth1c2d3e', 'ctr-eth0']),
    );
  });

  it('exits 68 when the master name resolves neither in /etc/hosts nor in DNS, after retrying the DNS that does not answer', async () => {
    // The namespace's DNS is its own loopback, where nothing answers: EAI_AGAIN, a
    // temporary failure, retried within --verify-timeout, then 68.
    const explained = await ncclRun('b', [
      'explain',
      '--json',
      '--log-format',
      'json',
      '--verify-timeout',
      '1s',
      ...job(1, 'trainer-9'),
    ]);
    expect(explained.exitCode).toBe(68);
    const report = JSON.parse(explained.stdout);
    expect(report.error).toMatchObject({ exitCode: 68 });
    expect(report.master).toMatchObject({ host: 'trainer-9', addresses: [] });
    expect(report.interfaces.length).toBeGreaterThan(0);
    expect(explained.stderr).toContain(
      "the master's name does not resolve yet (EAI_AGAIN); retrying up to 1 s",
    );
    expect(explained.stderr).toMatch(
      /master 'trainer-9' does not resolve \(EAI_AGAIN: [^)]*\) after \d+ s of retries/,
    );
    const launched = await launch('b', [
      '--log-format',
      'json',
      '--verify',
      'local',
      ...job(1, 'trainer-9'),
    ]);
    // --verify local waits for no master: no retry.
    expect(launched.exitCode).toBe(68);
    expect(launched.stderr).not.toContain('retrying');
    expect(launched.report).toBeUndefined();
  });

  /** Rank 1 of a 2-node job whose master is train-master-0, checked by explain on host k, as `cluster` sets it. */
  const lateNameWorker = (cluster: Record<string, string>) =>
    lab.exec(
      'k',
      BIN,
      ['explain', '--json', '--log-format', 'json', '--verify-timeout', '20s', 'train.py'],
      {
        cwd,
        env: {
          PATH: process.env.PATH,
          MASTER_ADDR: 'train-master-0',
          MASTER_PORT: '23456',
          PET_NNODES: '2',
          PET_NODE_RANK: '1',
          ...cluster,
        },
        extendEnv: false,
        reject: false,
        stdin: 'ignore',
        timeout: 30_000,
      },
    );
  const IN_A_POD = { KUBERNETES_SERVICE_HOST: '192.0.2.1' };

  /**
   * Writes the master pod's record into host k's /etc/hosts (a bind mount of
   * this file, written in place) once `worker` says it waits for the name, as
   * the record comes once that pod runs; the worker's result.
   */
  async function masterPodAppears(worker: ReturnType<typeof lateNameWorker>, hosts: string) {
    let stderr = '';
    await new Promise<void>((resolve) => {
      worker.stderr?.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        if (stderr.includes("the master's name does not resolve yet")) resolve();
      });
      void worker.finally(() => resolve());
    });
    writeFileSync(hosts, `${readFileSync(hosts, 'utf8')}${POD_MASTER} train-master-0\n`);
    return worker;
  }

  it("waits for a Kubernetes master pod's name that resolves only once that pod runs", async () => {
    const hosts = `/etc/netns/${lab.ns('k')}/hosts`;
    const before = readFileSync(hosts, 'utf8');
    try {
      const run = await masterPodAppears(lateNameWorker(IN_A_POD), hosts);
      expect(run.exitCode, String(run.stderr)).toBe(0);
      expect(String(run.stderr)).toContain(
        "the master's name does not resolve yet (EAI_AGAIN); retrying up to 20 s: a pod's DNS record appears once the pod runs",
      );
      expect((JSON.parse(String(run.stdout)) as Explained).master).toMatchObject({
        host: 'train-master-0',
        addresses: [POD_MASTER],
      });
    } finally {
      writeFileSync(hosts, before);
    }
  });

  it('retries "no such name" only in a PyTorchJob: elsewhere a missing name is 68 at once', async () => {
    // files only: an unknown name is ENOTFOUND, an answer, not a DNS that did not answer.
    const nsswitch = `/etc/netns/${lab.ns('k')}/nsswitch.conf`;
    const hosts = `/etc/netns/${lab.ns('k')}/hosts`;
    const before = readFileSync(hosts, 'utf8');
    writeFileSync(nsswitch, 'hosts: files\n');
    try {
      // Bare metal: the name is wrong, and waiting 20 s for it would only delay the 68.
      const bare = await lateNameWorker({});
      expect(bare.exitCode).toBe(68);
      expect(String(bare.stderr)).not.toContain('retrying');
      expect(String(bare.stderr)).toContain(
        "master 'train-master-0' does not resolve (ENOTFOUND: no such name in /etc/hosts or DNS); check",
      );

      const run = await masterPodAppears(lateNameWorker(IN_A_POD), hosts);
      expect(run.exitCode, String(run.stderr)).toBe(0);
      expect(String(run.stderr)).toContain(
        "the master's name does not resolve yet (ENOTFOUND); retrying up to 20 s: a pod's DNS record appears once the pod runs",
      );
    } finally {
      writeFileSync(nsswitch, NSSWITCH);
      writeFileSync(hosts, before);
    }
  });

  it("takes Multus' second network over the pod network the master is on, by its network-status", async () => {
    const status = join(cwd, 'annotations');
    const networks = [
      { name: 'k8s-pod-network', interface: 'eth0', ips: ['198.18.33.2'], default: true },
      { name: 'default/data-net', interface: 'net1', ips: [POD_NET1] },
    ];
    // As kubelet writes metadata.annotations: key="value", %q-quoted (JSON's quoting for ASCII).
    writeFileSync(
      status,
      [
        `k8s.v1.cni.cncf.io/network-status=${JSON.stringify(JSON.stringify(networks, null, 4))}`,
        'k8s.v1.cni.cncf.io/networks="data-net"',
      ].join('\n'),
    );
    const without = await explain('k', job(1, POD_MASTER));
    expect(without.decision).toMatchObject({ interface: 'eth0', strategy: 'subnet' });

    const onK = await explain('k', ['--network-status', status, ...job(1, POD_MASTER)]);
    expect(onK.decision).toMatchObject({
      interface: 'net1',
      address: POD_NET1,
      strategy: 'multus',
      reason: `Multus attached net1 (default/data-net, ${POD_NET1}) as a secondary network: the data network, not the pod network eth0`,
    });
    expect(onK.env).toMatchObject({ NCCL_SOCKET_IFNAME: '=net1', GLOO_SOCKET_IFNAME: 'net1' });
  });

  it('waits for the status of networks the pod asked for, then goes on without them, saying so', async () => {
    const status = join(cwd, 'annotations-pending');
    writeFileSync(status, 'k8s.v1.cni.cncf.io/networks="data-net"\n');
    const run = await ncclRun('k', [
      'explain',
      '--json',
      '--log-format',
      'json',
      '--verify-timeout',
      '1500ms',
      '--network-status',
      status,
      ...job(1, POD_MASTER),
    ]);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toContain(
      `waiting up to 2 s for Multus' network-status in ${status}: the pod asks for data-net`,
    );
    const explained = JSON.parse(run.stdout) as Explained;
    expect(explained.decision).toMatchObject({ interface: 'eth0', strategy: 'subnet' });
    expect(explained.trace.find((entry) => entry.strategy === 'multus')?.reason).toMatch(
      /still had no k8s\.v1\.cni\.cncf\.io\/network-status after 2 s \(the pod asks for data-net\)/,
    );
  });

  it('refuses a --network-status file that cannot be read (78), before anything starts', async () => {
    const run = await launch('k', [
      '--network-status',
      join(cwd, 'no-such-file'),
      ...job(1, POD_MASTER),
    ]);
    expect(run.exitCode).toBe(78);
    expect(run.stderr).toMatch(/--network-status .*no-such-file cannot be read \(ENOENT\)/);
    expect(run.report).toBeUndefined();
    // An --iface decides before multus is asked: the file is not read, and the job starts.
    const chosen = await launch('k', [
      '--network-status',
      join(cwd, 'no-such-file'),
      '--iface',
      'net1',
      ...job(1, POD_MASTER),
    ]);
    expect(chosen.exitCode, chosen.stderr).toBe(0);
    expect(chosen.report).toBeDefined();
  });
});
