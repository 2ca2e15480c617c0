/**
 * The data plane read from a real /sys (issue 12). No RDMA hardware here, so
 * a host is made that shows what one shows: in a network namespace with real
 * veth netdevs, a mount namespace (`unshare -m`, gone with its process) puts
 * a tmpfs over /sys/class with the real /sys/class/net bound back, and lays
 * out /sys/class/infiniband, /sys/class/infiniband_verbs and the PCI
 * functions under /sys/devices/pci0000:00 as the kernel does
 * (test/lab/rdma-sysfs.ts cites the sources: the ABI document,
 * drivers/infiniband/core/sysfs.c, roce_gid_mgmt.c, the EFA driver); /dev is
 * a tmpfs too, and /dev/infiniband/uverbsN are made with mknod (char
 * 231:192+N, as ib_uverbs numbers them). The built CLI runs inside and its
 * `explain --json`, `env` and `check` are read back: the facts, the verdict,
 * the checks of NCCL_IB_HCA and NCCL_IB_GID_INDEX, and --require-transport,
 * first without /dev/infiniband (a container started without it), then with.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HostFacts } from '../../src/host/host-facts.js';
import type { TransportPort } from '../../src/transport/transport-verdict.js';
import { Lab, netnsUnavailable } from '../lab/netns.js';
import { infinibandLines, privateDevLines } from '../lab/private-dev.js';
import {
  addressGid,
  layOutRdma,
  linkLocalGid,
  MLX5_0_PORT,
  RDMA_HOST,
  ROCE_MAC,
  ROCE_V4,
  ROCE_V6,
} from '../lab/rdma-sysfs.js';
import { tier } from '../lab/tier.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const CLI = join(REPO, 'bin/nccl-run.js');
const BUILT = join(REPO, 'dist/bin/nccl-run.cjs');

/** What these tests read of `explain --json`. */
interface Explained {
  interfaces: HostFacts['interfaces'];
  rdma: NonNullable<HostFacts['rdma']>;
  warnings: string[];
  env: Record<string, string>;
  transport: {
    kind: string;
    reason: string;
    devices: TransportPort[];
    deviceFiles: boolean;
    required: string | null;
    unmet: string | null;
  };
}

interface Outcome {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/**
 * The runs, in the namespace's order: those before `with-devices` see no
 * /dev/infiniband. Each is the CLI's arguments after `node bin/nccl-run.js`
 * and what it gets in its environment beside the test's.
 */
const RUNS: Record<string, { args: string[]; env?: Record<string, string> }> = {
  bare: { args: ['explain', '--json'] },
  'bare-check': { args: ['check', '--verify', 'none', '--log-format', 'json'] },
  'bare-required': {
    args: ['check', '--verify', 'none', '--log-format', 'json', '--require-transport', 'ib'],
  },
  'with-devices': { args: ['explain', '--json'] },
  'required-env': { args: ['env', '--format', 'json'], env: { NCCL_RUN_REQUIRE_TRANSPORT: 'ib' } },
  'required-check': {
    args: ['check', '--verify', 'none', '--log-format', 'json', '--require-transport', 'ib'],
  },
  'hca-collision': { args: ['explain', '--json'], env: { NCCL_IB_HCA: 'mlx5_1' } },
  'hca-nothing': { args: ['env'], env: { NCCL_IB_HCA: 'mlx5_9' } },
  'gid-v1': { args: ['explain', '--json'], env: { NCCL_IB_GID_INDEX: '2' } },
};
const JOB = ['--standalone', '--nnodes', '1'];

function unavailable(): string | null {
  if (netnsUnavailable !== null) return netnsUnavailable;
  if (!existsSync('/sys/devices/pci0000:00'))
    return 'no /sys/devices/pci0000:00 to lay the HCAs under';
  return null;
}

tier('the data plane read from a real /sys laid out as RDMA hosts show it', unavailable(), () => {
  const lab = new Lab('rd');
  const work = mkdtempSync(join(tmpdir(), 'ncr-rdma-ns-'));
  const outcomes = new Map<string, Outcome>();

  const outcome = (name: string): Outcome => {
    const found = outcomes.get(name);
    if (found === undefined) throw new Error(`no run named ${name}`);
    return found;
  };
  const explained = (name: string): Explained => JSON.parse(outcome(name).stdout) as Explained;
  const port = (explain: Explained, name: string) =>
    explain.transport.devices.find((entry) => entry.name === name);

  beforeAll(async () => {
    if (!existsSync(BUILT)) throw new Error(`${BUILT} is missing: run npm run build first`);
    await lab.host('n');
    await lab.host('p');
    for (const [mine, peer] of [
      ['ib0', 'p0'],
      ['ib1', 'p1'],
      ['eth2', 'p2'],
      ['ib10', 'p10'],
    ] as const) {
      await lab.link('n', mine, 'p', peer);
    }
    await lab.ip('n', 'link', 'set', 'eth2', 'address', ROCE_MAC);
    await lab.addr('n', 'eth2', `${ROCE_V4}/24`);
    await lab.addr('n', 'eth2', `${ROCE_V6}/64`);
    await lab.addr('n', 'ib0', '198.18.8.2/24');

    // mlx5_1 and mlx5_10: NCCL_IB_HCA=mlx5_1 takes both; mlx5_1's port is down.
    layOutRdma(join(work, 'sys'), RDMA_HOST);
    const runs = Object.entries(RUNS).map(([name, run]) => {
      const env = Object.entries(run.env ?? {})
        .map(([key, value]) => `${key}=${value}`)
        .join(' ');
      const command = `env ${env} "$NODE" ${CLI} ${[...run.args, ...JOB].join(' ')} >"$W/${name}.out" 2>"$W/${name}.err"; echo $? >"$W/${name}.rc"`;
      return name === 'with-devices' ? `infiniband\n${command}` : command;
    });
    const script = [
      'set -e',
      // /sys/class: a tmpfs, with the namespace's own /sys/class/net bound back.
      'mkdir "$W/net"',
      'mount --bind /sys/class/net "$W/net"',
      'mount -t tmpfs rdma-class /sys/class',
      'mkdir /sys/class/net',
      'mount --bind "$W/net" /sys/class/net',
      'cp -a "$W/sys/class/." /sys/class/',
      'mount -t tmpfs rdma-pci /sys/devices/pci0000:00',
      'cp -a "$W/sys/devices/pci0000:00/." /sys/devices/pci0000:00/',
      // /dev: a tmpfs of this namespace's own, as a container's /dev is.
      ...privateDevLines('rdma-dev', '$W/shm'),
      `infiniband() { ${infinibandLines(5, true).join('; ')}; }`,
      'set +e',
      ...runs,
    ].join('\n');
    writeFileSync(join(work, 'inside.sh'), script);
    await execa(
      'ip',
      ['netns', 'exec', lab.ns('n'), 'unshare', '-m', 'sh', join(work, 'inside.sh')],
      { env: { W: work, NODE: process.execPath }, timeout: 30_000 },
    );
    for (const name of Object.keys(RUNS)) {
      outcomes.set(name, {
        exitCode: Number(readFileSync(join(work, `${name}.rc`), 'utf8')),
        stdout: readFileSync(join(work, `${name}.out`), 'utf8'),
        stderr: readFileSync(join(work, `${name}.err`), 'utf8'),
      });
    }
  }, 60_000);

  afterAll(async () => {
    await lab.cleanup();
    rmSync(work, { recursive: true, force: true });
  });

  describe('in a container started without /dev/infiniband', () => {
    it('reads the devices from sysfs and no device file', () => {
      const bare = explained('bare');
      expect(bare.rdma.devices.map((device) => device.name)).toEqual([
        'efa_0',
        'mlx5_0',
        'mlx5_1',
        'mlx5_2',
        'mlx5_10',
      ]);
      expect(bare.rdma.deviceFiles).toEqual([]);
      expect(bare.transport).toMatchObject({
        kind: 'socket',
        // efa_0 beside the mlx5 devices: aws-ofi-nccl would be its way (cloud-plugin-transport.test.ts).
        reason:
          'no /dev/infiniband in this container; 1 EFA device(s) (efa_0), but no net plugin (no libnccl-net.so where the loader looks)',
        deviceFiles: false,
      });
    });

    it('says so in the launch summary', () => {
      expect(outcome('bare-check').exitCode).toBe(0);
      expect(outcome('bare-check').stderr).toContain(
        '; data plane: sockets (no /dev/infiniband in this container; 1 EFA device(s) (efa_0)',
      );
    });

    it('fails --require-transport ib with 69, naming what is missing', () => {
      const run = outcome('bare-required');
      expect(run.exitCode).toBe(69);
      expect(run.stderr).toContain(
        "--require-transport ib: NCCL's IB transport cannot run here: no /dev/infiniband in this container",
      );
    });
  });

  describe('with the device files', () => {
    it('reads each port as the kernel prints it', () => {
      const ports = Object.fromEntries(
        explained('with-devices').rdma.devices.map((device) => [device.name, device.ports[0]]),
      );
      expect(ports.mlx5_0).toEqual(MLX5_0_PORT);
      expect(ports.mlx5_1).toMatchObject({ state: 'DOWN', physState: 'Polling', netdev: 'ib1' });
      expect(ports.efa_0).toMatchObject({ linkLayer: 'Unknown', netdev: null, gidTableLength: 1 });
      expect(ports.mlx5_2?.gids).toEqual(
        [linkLocalGid(ROCE_MAC), addressGid(ROCE_V4), addressGid(ROCE_V6)].flatMap((gid, i) => [
          { index: 2 * i, gid, type: 'IB/RoCE v1', netdev: 'eth2' },
          { index: 2 * i + 1, gid, type: 'RoCE v2', netdev: 'eth2' },
        ]),
      );
    });

    it('maps the real veth to its RDMA port, and lists the device files', () => {
      const explain = explained('with-devices');
      expect(explain.interfaces.find((iface) => iface.name === 'eth2')?.rdma).toEqual({
        device: 'mlx5_2',
        port: 1,
        state: 'ACTIVE',
      });
      expect(explain.rdma.deviceFiles).toEqual([
        'rdma_cm',
        'uverbs0',
        'uverbs1',
        'uverbs2',
        'uverbs3',
        'uverbs4',
      ]);
    });

    it("gives NCCL's verdict: the active InfiniBand and RoCE ports, the RoCE v2 GID of eth2's IPv4 address", () => {
      const explain = explained('with-devices');
      expect(explain.transport).toMatchObject({ kind: 'ib', deviceFiles: true });
      expect(
        explain.transport.devices.map(
          (entry) => `${entry.name}:${entry.port} ${entry.used ? 'uses' : entry.skipped}`,
        ),
      ).toEqual([
        'efa_0:1 link layer Unknown',
        'mlx5_0:1 uses',
        'mlx5_1:1 port DOWN',
        'mlx5_2:1 uses',
        'mlx5_10:1 uses',
      ]);
      expect(port(explain, 'mlx5_2')).toMatchObject({
        linkLayer: 'Ethernet',
        rateGbps: 100,
        netdev: 'eth2',
        gidIndex: 3,
        gid: ROCE_V4,
        gidType: 'RoCE v2',
      });
      expect(port(explain, 'mlx5_0')).toMatchObject({ gidIndex: 0, rateGbps: 200 });
    });

    it('replays exactly from its own snapshot', async () => {
      const snapshot = join(work, 'with-devices.out');
      const { stdout } = await execa(process.execPath, [
        CLI,
        'explain',
        '--json',
        '--facts',
        snapshot,
        ...JOB,
      ]);
      const replayed = JSON.parse(stdout) as Explained;
      expect(replayed.rdma).toEqual(explained('with-devices').rdma);
      expect(replayed.transport).toEqual(explained('with-devices').transport);
    });

    it('meets --require-transport ib, and sets NCCL_NET=IB', () => {
      expect(JSON.parse(outcome('required-env').stdout)).toMatchObject({ NCCL_NET: 'IB' });
      expect(outcome('required-check').exitCode).toBe(0);
      expect(outcome('required-check').stderr).toContain(
        'NCCL_NET=IB; data plane: IB (mlx5_0:1, mlx5_2:1 GID 3, mlx5_10:1)',
      );
    });

    it('warns that NCCL_IB_HCA=mlx5_1 also takes mlx5_10 and names a port that is down', () => {
      const explain = explained('hca-collision');
      expect(explain.warnings).toEqual(
        expect.arrayContaining([
          "NCCL_IB_HCA='mlx5_1' (set in the environment): 'mlx5_1' also takes mlx5_10 (NCCL matches names by prefix); start the list with '=' for exact names: NCCL_IB_HCA='=mlx5_1'",
          "NCCL_IB_HCA='mlx5_1' (set in the environment): 'mlx5_1' names mlx5_1:1 (port DOWN), which NCCL skips",
        ]),
      );
      expect(
        explain.transport.devices.filter((entry) => entry.used).map((entry) => entry.name),
      ).toEqual(['mlx5_10']);
    });

    it('stops with 78 when NCCL_IB_HCA selects no port', () => {
      const run = outcome('hca-nothing');
      expect(run.exitCode).toBe(78);
      expect(run.stderr).toContain(
        "NCCL_IB_HCA='mlx5_9' (set in the environment) matches no RDMA port here",
      );
    });

    it('warns that NCCL_IB_GID_INDEX=2 is a RoCE v1 GID on mlx5_2', () => {
      expect(explained('gid-v1').warnings).toContain(
        `NCCL_IB_GID_INDEX=2 (set in the environment): on mlx5_2:1 (eth2) GID 2 is RoCE v1 (${ROCE_V4}), which does not route between subnets; unset, NCCL would take GID 3 (RoCE v2 ${ROCE_V4})`,
      );
    });
  });
});
