/**
 * The data planes of the largest GPU clouds, read from a real /sys laid out
 * as those hosts show it (issue 37), the RDMA tier's way
 * (rdma-transport.test.ts): in a network namespace with real veths, a mount
 * namespace puts a tmpfs over /sys/class (the namespace's /sys/class/net
 * bound back) and over /sys/devices/pci0000:00, laid out by
 * test/lab/rdma-sysfs.ts, and a /dev of its own (test/lab/private-dev.ts)
 * with /dev/infiniband and its uverbs devices.
 * Hosts, one after another in the same namespace:
 * - p4d.24xlarge: 4 EFA devices, 4x100 Gb/s (AWS EC2 docs, "Elastic Fabric
 *   Adapter", supported instance types; p4d has 4 network cards);
 * - p5.48xlarge: 32 EFA devices (AWS EC2 docs, efa-acc-inst-types: "P5 and
 *   P5e instances support up to 32 network cards"), named rdmapNsM as the EFA
 *   driver's PCI functions are (bus N, slot M), names laid out, not copied;
 * - a3-highgpu-8g: eth0 and 4 GPU NICs (GKE docs, gpu-bandwidth-gpudirect-tcpx:
 *   "up to four secondary NICs, each 200 Gbps"), GPUDirect-TCPX's variables
 *   as GKE's manifests set them (NCCL_GPUDIRECTTCPX_SOCKET_IFNAME=eth1,eth2,
 *   eth3,eth4, NCCL_GPUDIRECTTCPX_CTRL_DEV=eth0);
 * - a3-megagpu-8g: eth0 and 8 GPU NICs (GKE docs,
 *   gpu-bandwidth-gpudirect-tcpx for A3 Mega: eight secondary NICs), TCPXO's
 *   NCCL_FASTRAK_IFNAME and NCCL_FASTRAK_CTRL_DEV.
 * Each with and without its net plugin. No real aws-ofi-nccl or Google plugin
 * runs here (no EFA, no gVNIC): the "plugin" is a file where its installer
 * puts it (net-plugin-kinds.ts cites where), found through LD_LIBRARY_PATH by
 * the loader rules the loader tier holds to glibc (test/e2e/net-plugin-loader.test.ts).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Lab, netnsUnavailable } from '../lab/netns.js';
import { infinibandLines, privateDevLines } from '../lab/private-dev.js';
import { efa, type FakeHca, layOutRdma } from '../lab/rdma-sysfs.js';
import { tier } from '../lab/tier.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const CLI = join(REPO, 'bin/nccl-run.js');
const BUILT = join(REPO, 'dist/bin/nccl-run.cjs');

interface Explained {
  decision: { interface: string };
  warnings: string[];
  env: Record<string, string>;
  transport: {
    kind: string;
    reason: string;
    devices: { name: string; used: boolean }[];
    netPlugin: {
      found: { kind: string; path: string; ncclNet: string | null } | null;
      variables: Record<string, string>;
    };
    unmet: string | null;
  };
}

const efaHost = (count: number): FakeHca[] =>
  Array.from({ length: count }, (_, i) => {
    const bus = (16 + 16 * i).toString(16).padStart(2, '0');
    return efa(
      `rdmap${16 + 16 * i}s27`,
      `0000:${bus}:1b.0`,
      `uverbs${i}`,
      `fe80:0000:0000:0000:04${(i % 256).toString(16).padStart(2, '0')}:06ff:fe2b:1c3d`,
    );
  });

interface Layout {
  hcas: FakeHca[];
  /** The NICs, as veths of the namespace; the first carries the host's address. */
  nics: string[];
  /**
   * NICs shown as gVNICs: their sysfs folder copied, with device/vendor 0x1ae0
   * and this speed (Mb/s), bound over /sys/devices/virtual/net/NIC.
   */
  gvnics?: Record<string, number>;
}

const LAYOUTS: Record<string, Layout> = {
  p4d: { hcas: efaHost(4), nics: ['ens32'] },
  p5: { hcas: efaHost(32), nics: ['ens32'] },
  a3high: { hcas: [], nics: ['eth0', 'eth1', 'eth2', 'eth3', 'eth4'] },
  a3mega: { hcas: [], nics: ['eth0', ...Array.from({ length: 8 }, (_, i) => `eth${i + 1}`)] },
  // a3-high again, its NICs gVNICs in sysfs, the GPU NICs the faster: no list set, the vendor decides.
  a3vendor: {
    hcas: [],
    nics: ['eth0', 'eth1', 'eth2', 'eth3', 'eth4'],
    gvnics: { eth0: 100000, eth1: 200000, eth2: 200000, eth3: 200000, eth4: 200000 },
  },
};

interface Run {
  layout: keyof typeof LAYOUTS;
  args: string[];
  env?: Record<string, string>;
  /** Which plugin folder goes on LD_LIBRARY_PATH. */
  plugin?: 'ofi' | 'tcpx' | 'tcpxo';
  /** torchrun's arguments, when not JOB. */
  job?: string[];
}

const EXPLAIN = ['explain', '--json'];
const CHECK = ['check', '--verify', 'none', '--log-format', 'json'];
const TCPX_ENV = {
  NCCL_GPUDIRECTTCPX_SOCKET_IFNAME: 'eth1,eth2,eth3,eth4',
  NCCL_GPUDIRECTTCPX_CTRL_DEV: 'eth0',
};
/** A master on no local network and with no route: the speed strategy decides. */
const FAR_MASTER = [
  '--nnodes',
  '2',
  '--node_rank',
  '1',
  '--master_addr',
  '203.0.113.9',
  '--master_port',
  '29500',
];
const RUNS: Record<string, Run> = {
  'p4d-bare': { layout: 'p4d', args: EXPLAIN },
  'p4d-bare-required': { layout: 'p4d', args: [...CHECK, '--require-transport', 'efa'] },
  'p4d-bare-rdma': { layout: 'p4d', args: [...CHECK, '--require-transport', 'rdma'] },
  'p4d-plugin': { layout: 'p4d', args: EXPLAIN, plugin: 'ofi' },
  'p4d-plugin-required': {
    layout: 'p4d',
    args: ['env', '--format', 'json', '--require-transport', 'efa'],
    plugin: 'ofi',
  },
  'p4d-plugin-check': {
    layout: 'p4d',
    args: [...CHECK, '--require-transport', 'efa'],
    plugin: 'ofi',
  },
  'p4d-user-net': {
    layout: 'p4d',
    args: ['env', '--format', 'json', '--require-transport', 'efa'],
    plugin: 'ofi',
    env: { NCCL_NET: 'OFI' },
  },
  'p5-plugin': { layout: 'p5', args: EXPLAIN, plugin: 'ofi' },
  'a3high-bare': { layout: 'a3high', args: EXPLAIN, env: TCPX_ENV },
  'a3high-plugin': { layout: 'a3high', args: EXPLAIN, plugin: 'tcpx', env: TCPX_ENV },
  'a3high-wrong-list': {
    layout: 'a3high',
    args: EXPLAIN,
    plugin: 'tcpx',
    env: { ...TCPX_ENV, NCCL_GPUDIRECTTCPX_SOCKET_IFNAME: 'eth1,eth2,eth3,eth5' },
  },
  'a3vendor-bare': { layout: 'a3vendor', args: EXPLAIN, job: FAR_MASTER },
  'a3vendor-plugin': { layout: 'a3vendor', args: EXPLAIN, plugin: 'tcpx', job: FAR_MASTER },
  'a3mega-plugin': {
    layout: 'a3mega',
    args: EXPLAIN,
    plugin: 'tcpxo',
    env: {
      NCCL_FASTRAK_IFNAME: 'eth1,eth2,eth3,eth4,eth5,eth6,eth7,eth8',
      NCCL_FASTRAK_CTRL_DEV: 'eth0',
    },
  },
};
/** A two-node job whose master is on the host NIC's network. */
const JOB = [
  '--nnodes',
  '2',
  '--node_rank',
  '0',
  '--master_addr',
  '198.18.40.5',
  '--master_port',
  '29500',
];

const PLUGIN_DIRS = {
  ofi: 'opt/amazon/ofi-nccl/lib',
  tcpx: 'usr/local/tcpx/lib64',
  tcpxo: 'var/lib/tcpxo/lib64',
};

tier(
  'the net plugin data planes of EFA and gVNIC hosts, read from a real /sys',
  netnsUnavailable,
  () => {
    const lab = new Lab('37');
    const work = mkdtempSync(join(tmpdir(), 'n37-cloud-'));
    const outcomes = new Map<string, { exitCode: number; stdout: string; stderr: string }>();
    const outcome = (name: string) => {
      const found = outcomes.get(name);
      if (found === undefined) throw new Error(`no run named ${name}`);
      return found;
    };
    const explained = (name: string) => JSON.parse(outcome(name).stdout) as Explained;

    beforeAll(async () => {
      if (!existsSync(BUILT)) throw new Error(`${BUILT} is missing: run npm run build first`);
      for (const dir of Object.values(PLUGIN_DIRS)) {
        mkdirSync(join(work, 'plugins', dir), { recursive: true });
        writeFileSync(join(work, 'plugins', dir, 'libnccl-net.so'), '');
      }
      const script = ['set +e'];
      for (const [name, layout] of Object.entries(LAYOUTS)) {
        const host = `h${name}`;
        await lab.host(host);
        await lab.host(`p${name}`);
        for (const [i, nic] of layout.nics.entries())
          await lab.link(host, nic, `p${name}`, `p${i}`);
        await lab.addr(host, layout.nics[0] as string, '198.18.40.5/24');
        for (const [i, nic] of layout.nics.slice(1).entries())
          await lab.addr(host, nic, `198.18.${41 + i}.5/24`);
        layOutRdma(join(work, name, 'sys'), layout.hcas);
      }
      await lab.ip('ha3high', 'link', 'set', 'eth3', 'down');
      const runs = Object.entries(RUNS).map(([name, run]) => {
        const ld =
          run.plugin === undefined
            ? ''
            : `LD_LIBRARY_PATH=${join(work, 'plugins', PLUGIN_DIRS[run.plugin])}`;
        const env = [ld, ...Object.entries(run.env ?? {}).map(([k, v]) => `${k}=${v}`)]
          .filter(Boolean)
          .join(' ');
        const inside = [
          'mkdir "$W/net-$L" 2>/dev/null; mount --bind /sys/class/net "$W/net-$L"',
          'mount -t tmpfs c37 /sys/class; mkdir /sys/class/net; mount --bind "$W/net-$L" /sys/class/net',
          'cp -a "$W/$L/sys/class/." /sys/class/ 2>/dev/null',
          'mount -t tmpfs d37 /sys/devices/pci0000:00; cp -a "$W/$L/sys/devices/pci0000:00/." /sys/devices/pci0000:00/ 2>/dev/null',
          ...privateDevLines('v37', '$W/shm-$L'),
          ...infinibandLines(32),
          ...Object.entries(LAYOUTS[run.layout]?.gvnics ?? {}).map(([nic, speed]) =>
            [
              `d="$W/gvnic-${name}-${nic}"; mkdir -p "$d/device"`,
              `for f in /sys/class/net/${nic}/*; do [ -f "$f" ] && cat "$f" > "$d/\${f##*/}" 2>/dev/null; done`,
              `echo 0x1ae0 > "$d/device/vendor"; echo ${speed} > "$d/speed"`,
              `mount --bind "$d" /sys/devices/virtual/net/${nic}`,
            ].join('; '),
          ),
          `env ${env} "$NODE" ${CLI} ${[...run.args, ...(run.job ?? JOB)].join(' ')} >"$W/${name}.out" 2>"$W/${name}.err"; echo $? >"$W/${name}.rc"`,
        ].join('\n');
        writeFileSync(join(work, `${name}.sh`), inside);
        return `L=${run.layout} ip netns exec ${lab.ns(`h${run.layout}`)} unshare -m sh "$W/${name}.sh"`;
      });
      writeFileSync(join(work, 'all.sh'), [...script, ...runs].join('\n'));
      await execa('sh', [join(work, 'all.sh')], {
        env: { W: work, NODE: process.execPath },
        timeout: 60_000,
      });
      for (const name of Object.keys(RUNS)) {
        outcomes.set(name, {
          exitCode: Number(readFileSync(join(work, `${name}.rc`), 'utf8')),
          stdout: readFileSync(join(work, `${name}.out`), 'utf8'),
          stderr: readFileSync(join(work, `${name}.err`), 'utf8'),
        });
      }
    }, 90_000);

    afterAll(async () => {
      await lab.cleanup();
      rmSync(work, { recursive: true, force: true });
    });

    describe('p4d, 4 EFA devices', () => {
      it('without the plugin: sockets, and a warning naming the fix', () => {
        const bare = explained('p4d-bare');
        expect(bare.transport.kind, outcome('p4d-bare').stderr).toBe('socket');
        expect(bare.transport.netPlugin.found).toBeNull();
        expect(bare.warnings.join('\n')).toMatch(
          /4 EFA device\(s\) \(rdmap16s27, rdmap32s27, rdmap48s27, rdmap64s27\), but no net plugin .* put aws-ofi-nccl's folder .* on LD_LIBRARY_PATH/,
        );
      });

      it('--require-transport efa and rdma stop with 78 before launch', () => {
        for (const name of ['p4d-bare-required', 'p4d-bare-rdma']) {
          expect(outcome(name).exitCode, outcome(name).stderr).toBe(78);
          expect(outcome(name).stderr).toMatch(
            /EFA devices \(rdmap16s27.*\) but NCCL will not load aws-ofi-nccl/,
          );
        }
      });

      it('with aws-ofi-nccl: transport efa, the socket interface for the bootstrap only', () => {
        const found = explained('p4d-plugin');
        expect(found.transport.kind).toBe('efa');
        expect(found.transport.reason).toMatch(
          /^aws-ofi-nccl \(.*\/opt\/amazon\/ofi-nccl\/lib\/libnccl-net\.so, via LD_LIBRARY_PATH\) drives 4 EFA device\(s\)/,
        );
        expect(found.transport.reason).toContain(
          "the socket interface carries NCCL's bootstrap only",
        );
        expect(found.transport.devices.every((port) => port.used)).toBe(true);
        expect(found.decision.interface).toBe('ens32');
      });

      it('required: exports NCCL_NET="AWS Libfabric" (every aws-ofi-nccl answers to it), and check passes', () => {
        expect(JSON.parse(outcome('p4d-plugin-required').stdout)).toMatchObject({
          NCCL_NET: 'AWS Libfabric',
        });
        expect(outcome('p4d-plugin-check').exitCode, outcome('p4d-plugin-check').stderr).toBe(0);
        expect(outcome('p4d-plugin-check').stderr).toContain(
          'data plane: EFA through aws-ofi-nccl',
        );
      });

      it("never overwrites the user's NCCL_NET", () => {
        const run = outcome('p4d-user-net');
        expect(run.exitCode, run.stderr).toBe(0);
        expect(JSON.parse(run.stdout).NCCL_NET).toBeUndefined();
      });
    });

    it('p5: all 32 EFA devices go through the plugin', () => {
      const found = explained('p5-plugin');
      expect(found.transport.kind).toBe('efa');
      expect(found.transport.devices.filter((port) => port.used)).toHaveLength(32);
    });

    describe('a3-high, eth0 and 4 GPU NICs', () => {
      it('without the plugin: sockets', () => {
        expect(explained('a3high-bare').transport.kind).toBe('socket');
      });

      it('with GPUDirect-TCPX: transport plugin, the GPU NICs its own, the bootstrap on eth0', () => {
        const found = explained('a3high-plugin');
        expect(found.transport.kind).toBe('plugin');
        expect(found.transport.netPlugin.found).toMatchObject({
          kind: 'gpudirect-tcpx',
          ncclNet: 'GPUDirectTCPX_v7',
        });
        expect(found.transport.reason).toMatch(
          /over the GPU NICs eth1, eth2, eth3, eth4 \(NCCL_GPUDIRECTTCPX_SOCKET_IFNAME=eth1,eth2,eth3,eth4\).*bootstrap only \(the host NIC, eth0\)/,
        );
        expect(found.decision.interface).toBe('eth0');
        expect(found.env.NCCL_GPUDIRECTTCPX_SOCKET_IFNAME).toBeUndefined();
        expect(found.transport.netPlugin.variables).toEqual(TCPX_ENV);
      });

      it("warns when the plugin's list names a missing or down interface", () => {
        expect(explained('a3high-wrong-list').warnings).toContain(
          "NCCL_GPUDIRECTTCPX_SOCKET_IFNAME=eth1,eth2,eth3,eth5 (GPUDirect-TCPX's own list, kept): eth3 is down, eth5 does not exist here; the plugin cannot use it",
        );
      });
    });

    describe('a3-high whose NICs sysfs shows as gVNICs, no list set', () => {
      it('without the plugin the speed strategy takes a 200G GPU NIC', () => {
        const bare = explained('a3vendor-bare');
        expect(bare.decision.interface, outcome('a3vendor-bare').stderr).toBe('eth1');
      });

      it('with GPUDirect-TCPX the gVNICs but the first are its own: the bootstrap stays on eth0', () => {
        const found = explained('a3vendor-plugin');
        expect(found.decision.interface, outcome('a3vendor-plugin').stderr).toBe('eth0');
        expect(found.transport.reason).toContain(
          'over the GPU NICs eth1, eth2, eth3, eth4 (the gVNICs (PCI vendor 0x1ae0) but its control NIC)',
        );
      });
    });

    it('a3-mega, eth0 and 8 GPU NICs: TCPXO (FasTrak) takes the 8, the bootstrap stays on eth0', () => {
      const found = explained('a3mega-plugin');
      expect(found.transport.kind).toBe('plugin');
      expect(found.transport.netPlugin.found).toMatchObject({ kind: 'tcpxo', ncclNet: 'FasTrak' });
      expect(found.transport.reason).toContain('eth1, eth2, eth3, eth4, eth5, eth6, eth7, eth8');
      expect(found.decision.interface).toBe('eth0');
    });
  },
);
