/**
 * The reader, first over a fixture tree (the GPUs there are fake: a driver
 * list and device files as the NVIDIA driver shows them; there is no GPU
 * here), then for real: limits set by prlimit on the process that reads
 * them, with CAP_IPC_LOCK dropped from its bounding set (setpriv); a tmpfs
 * mounted where the reader looks for /dev/shm, and the same remounted
 * read-only; MTUs and rp_filter sysctls on veths in network namespaces the
 * test makes (198.18.0.0/15 only).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { compareMtus } from '../../../src/readiness/mtu.js';
import type { NodeReadiness } from '../../../src/readiness/node-readiness.js';
import { readNodeReadiness } from '../../../src/readiness/read-node-readiness.js';
import { readiness } from '../../../src/readiness/readiness.js';
import { CHECKOUT, jobNeeds, READER_ENV, readerArgv } from '../../fixtures/readiness.js';
import { Lab, netnsUnavailable } from '../../lab/netns.js';
import { tier } from '../../lab/tier.js';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

function tree(files: Record<string, string>, dirs: string[] = []): string {
  const root = mkdtempSync(join(tmpdir(), 'ncr-ready-'));
  for (const dir of dirs) mkdirSync(join(root, dir), { recursive: true });
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

const LIMITS = `Limit                     Soft Limit           Hard Limit           Units     
Max open files            1024                 524288               files     
Max locked memory         65536                65536                bytes     
`;
const information = (minor: number, uuid: string) =>
  `Model: \t\t NVIDIA H100 80GB HBM3\nIRQ:   \t\t 0\nGPU UUID: \t ${uuid}\nBus Type: \t PCIe\nDevice Minor: \t ${minor}\nGPU Excluded:\t No\n`;

describe('readNodeReadiness over a fixture tree (fake GPUs)', () => {
  const root = tree(
    {
      'proc/self/limits': LIMITS,
      'proc/self/status': 'Name:\tnode\nCapEff:\t00000000a80425fb\nCpus_allowed_list:\t0-3,8\n',
      'sys/devices/system/cpu/online': '0-15\n',
      'sys/class/net/ens5/mtu': '9001\n',
      'sys/class/net/ens5/device/vendor': '0x1d0f\n',
      'proc/sys/net/ipv4/conf/all/rp_filter': '1\n',
      'proc/sys/net/ipv4/conf/ens5/rp_filter': '2\n',
      'proc/driver/nvidia/gpus/0000:18:00.0/information': information(0, 'GPU-aaaa'),
      'proc/driver/nvidia/gpus/0000:2a:00.0/information': information(1, 'GPU-bbbb'),
      'proc/driver/nvidia/gpus/0000:3a:00.0/information': information(2, 'GPU-cccc'),
      'dev/nvidia0': '',
      'dev/nvidia2': '',
      'dev/nvidiactl': '',
      'dev/nvidia-uvm': '',
      '.dockerenv': '',
    },
    ['dev/shm', 'sys/module/nvidia_peermem'],
  );
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('reads every fact from its file', () => {
    const env = { CUDA_VISIBLE_DEVICES: '1,0', SLURM_JOB_ID: '42' };
    const node = readNodeReadiness(env, 'ens5', { root });
    expect(node).toEqual({
      shm: {
        path: '/dev/shm',
        unusable: null,
        sizeBytes: expect.any(Number),
        freeBytes: expect.any(Number),
        blockBytes: expect.any(Number),
        // A folder on the test's disk, not a tmpfs.
        tmpfs: false,
      },
      memlock: { soft: 65536, hard: 65536 },
      nofile: { soft: 1024, hard: 524288 },
      // 0xa80425fb: a container's default set, without CAP_IPC_LOCK (bit 14).
      ipcLock: false,
      gpuDirect: true,
      cpus: { online: 16, allowed: 5 },
      network: {
        interface: 'ens5',
        mtu: 9001,
        vendor: '0x1d0f',
        rpFilter: { all: 1, interface: 2 },
      },
      gpus: {
        driver: [
          { busId: '0000:18:00.0', minor: 0, uuid: 'GPU-aaaa' },
          { busId: '0000:2a:00.0', minor: 1, uuid: 'GPU-bbbb' },
          { busId: '0000:3a:00.0', minor: 2, uuid: 'GPU-cccc' },
        ],
        deviceFiles: [0, 2],
        cudaVisibleDevices: '1,0',
        nvidiaVisibleDevices: null,
      },
      contexts: ['docker', 'slurm'],
    } satisfies NodeReadiness);
  });

  it('says what is missing: no /dev/shm, no limits, no interface, no GPU', () => {
    const empty = tree({});
    try {
      expect(
        readNodeReadiness({ KUBERNETES_SERVICE_HOST: '10.96.0.1' }, null, { root: empty }),
      ).toEqual({
        shm: {
          path: '/dev/shm',
          unusable: '/dev/shm does not exist',
          sizeBytes: 0,
          freeBytes: 0,
          blockBytes: 4096,
          tmpfs: false,
        },
        memlock: null,
        nofile: null,
        ipcLock: null,
        gpuDirect: false,
        cpus: { online: null, allowed: null },
        network: null,
        gpus: { driver: [], deviceFiles: [], cudaVisibleDevices: null, nvidiaVisibleDevices: null },
        contexts: ['kubernetes'],
      } satisfies NodeReadiness);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it('a /dev/shm that is a file is unusable', () => {
    const odd = tree({ 'dev/shm': '' });
    try {
      expect(readNodeReadiness({}, null, { root: odd }).shm.unusable).toBe(
        '/dev/shm is not a directory',
      );
    } finally {
      rmSync(odd, { recursive: true, force: true });
    }
  });
});

const prlimitUnavailable =
  ['prlimit', 'setpriv'].find((tool) => {
    try {
      execFileSync('sh', ['-c', `command -v ${tool}`]);
      return false;
    } catch {
      return true;
    }
  }) === undefined
    ? process.getuid?.() === 0
      ? null
      : 'dropping CAP_IPC_LOCK from the bounding set needs root (CI runs as root)'
    : 'prlimit and setpriv (util-linux) are needed';

/**
 * bin/nccl-run's arrangement: a shell that runs the reader's Node and then
 * would exec torchrun, under the limits prlimit set on it; the reader reads
 * the shell's ($$) or, with no pid, its own.
 */
async function readUnder(limits: string[], dropIpcLock: boolean, launcher: 'shell' | 'self') {
  const caps = dropIpcLock
    ? ['setpriv', '--bounding-set=-ipc_lock', '--inh-caps=-ipc_lock', '--']
    : [];
  const script = `"$@" '' '' ${launcher === 'shell' ? '$$' : "''"}; :`;
  const { stdout } = await execa(
    'prlimit',
    [...limits, '--', ...caps, 'sh', '-c', script, 'sh', ...readerArgv()],
    { cwd: CHECKOUT, env: READER_ENV, extendEnv: false },
  );
  return JSON.parse(String(stdout)) as NodeReadiness;
}

tier('the reader under a real ulimit (prlimit, setpriv)', prlimitUnavailable, () => {
  const limits = ['--memlock=65536:65536', '--nofile=1024:4096'];

  it("reads the launcher's limits and capability, and refuses --require-transport ib under 64 KiB", async () => {
    const node = await readUnder(limits, true, 'shell');
    expect(node).toMatchObject({
      memlock: { soft: 65536, hard: 65536 },
      nofile: { soft: 1024, hard: 4096 },
      ipcLock: false,
    });
    const memlock = (requireTransport: 'ib' | null) =>
      readiness(jobNeeds({ requireTransport }), node).find((f) => f.check === 'memlock')?.level;
    expect(memlock('ib')).toBe('refused');
    expect(memlock(null)).toBe('warning');
  });

  it("Node's own soft descriptor limit is raised to the hard one: not what torchrun gets", async () => {
    expect((await readUnder(limits, true, 'self')).nofile).toEqual({ soft: 4096, hard: 4096 });
  });

  it('with CAP_IPC_LOCK kept, the same limit passes', async () => {
    const node = await readUnder(limits, false, 'shell');
    expect(node.ipcLock).toBe(true);
    const finding = readiness(jobNeeds({ requireTransport: 'ib' }), node).find(
      (f) => f.check === 'memlock',
    );
    expect(finding?.level).toBe('ok');
  });
});

tier(
  'the reader on a real tmpfs',
  process.getuid?.() === 0 ? null : 'mounting a tmpfs needs root (CI runs as root)',
  () => {
    const root = tree({}, ['dev/shm']);
    const shm = join(root, 'dev/shm');
    beforeAll(() => execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64m', 'tmpfs', shm]));
    afterAll(() => {
      execFileSync('umount', [shm]);
      rmSync(root, { recursive: true, force: true });
    });

    it("reads Docker's default size, and what a segment takes from it", () => {
      expect(readNodeReadiness({}, null, { root }).shm).toEqual({
        path: '/dev/shm',
        unusable: null,
        sizeBytes: 64 * 2 ** 20,
        freeBytes: 64 * 2 ** 20,
        blockBytes: 4096,
        tmpfs: true,
      });
      // What ncclShmOpen does: fallocate() an SHM receiver's 9637892 bytes; tmpfs takes 2354 pages.
      execFileSync('fallocate', ['-l', '9637892', join(shm, 'nccl-AbCdEf')]);
      expect(readNodeReadiness({}, null, { root }).shm.freeBytes).toBe(64 * 2 ** 20 - 2354 * 4096);
      rmSync(join(shm, 'nccl-AbCdEf'));
    });

    it('read-only, it is unusable: 8 local ranks are refused', () => {
      execFileSync('mount', ['-o', 'remount,ro', shm]);
      try {
        const node = readNodeReadiness({}, null, { root });
        expect(node.shm.unusable).toBe('/dev/shm cannot be written (EROFS)');
        expect(
          readiness(jobNeeds(), {
            ...node,
            gpus: {
              driver: [],
              deviceFiles: [],
              cudaVisibleDevices: null,
              nvidiaVisibleDevices: null,
            },
          }).find((f) => f.check === 'shm')?.level,
        ).toBe('refused');
      } finally {
        execFileSync('mount', ['-o', 'remount,rw', shm]);
      }
    });
  },
);

tier('the reader in network namespaces (real MTUs and rp_filter)', netnsUnavailable, () => {
  const lab = new Lab('ready');
  beforeAll(async () => {
    await lab.host('a');
    await lab.host('b');
    await lab.link('a', 'ens3f0', 'b', 'eth0');
    await lab.ip('a', 'link', 'set', 'ens3f0', 'mtu', '9000');
    await lab.ip('b', 'link', 'set', 'eth0', 'mtu', '1500');
    await lab.addr('a', 'ens3f0', '198.18.40.1/24');
    await lab.addr('b', 'eth0', '198.18.40.2/24');
  });
  afterAll(() => lab.cleanup());

  const read = async (host: string, iface: string) => {
    const [node, ...args] = readerArgv(iface);
    const { stdout } = await lab.exec(host, node as string, args, {
      cwd: CHECKOUT,
      env: READER_ENV,
      extendEnv: false,
    });
    return JSON.parse(String(stdout)) as NodeReadiness;
  };
  const sysctl = (host: string, name: string, value: number) =>
    lab.exec(host, 'sh', ['-c', `echo ${value} > /proc/sys/net/ipv4/conf/${name}/rp_filter`]);

  it("reads each side's own MTU, and the mismatch is a warning naming the other node", async () => {
    const [a, b] = [await read('a', 'ens3f0'), await read('b', 'eth0')];
    expect(a.network?.mtu).toBe(9000);
    expect(b.network?.mtu).toBe(1500);
    // What the mesh does with the roster's MTUs (peers/mesh.ts).
    expect(
      compareMtus('ens3f0', a.network?.mtu ?? 0, [{ node: 'b', mtu: b.network?.mtu ?? 0 }]),
    ).toMatchObject({
      level: 'warning',
      evidence: expect.stringMatching(/^ens3f0 has MTU 9000, but b has 1500: frames above 1500/),
    });
  });

  it("reads the namespace's own rp_filter sysctls, all and the interface", async () => {
    await sysctl('a', 'all', 1);
    await sysctl('a', 'ens3f0', 0);
    expect((await read('a', 'ens3f0')).network?.rpFilter).toEqual({ all: 1, interface: 0 });
    await sysctl('a', 'all', 0);
    await sysctl('a', 'ens3f0', 2);
    expect((await read('a', 'ens3f0')).network?.rpFilter).toEqual({ all: 0, interface: 2 });
    // The other namespace kept its own.
    await sysctl('b', 'all', 1);
    expect((await read('b', 'eth0')).network?.rpFilter.all).toBe(1);
  });
});
