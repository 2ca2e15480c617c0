/**
 * NCCL as the oracle (issue 9 item 3, issue 13, SPEC "NCCL's own pick"): for
 * hosts shaped like real clusters' nodes, the real NCCL 2.22 (Debian 13's
 * libnccl2, through test/lab/nccl-oracle.ts) and, for the 2.28+ rules, the
 * real NCCL 2.29.7 (Debian sid's, issue 20) are each given exactly what nccl-run
 * exports, and must bind the interface and the address nccl-run reports as
 * its decision; under the user's own NCCL settings (a kept
 * NCCL_SOCKET_IFNAME or NCCL_SOCKET_FAMILY, in the environment or
 * ~/.nccl.conf, or NCCL_COMM_ID), the pick nccl-run reports for NCCL
 * (`nccl.pick`) must be NCCL's real one; and with nothing set by nccl-run,
 * `unmanaged.nccl` must be NCCL's real pick.
 *
 * nccl-run runs on the host as a user runs it (explain --json, --verify none,
 * its own hostname and /etc/hosts); NCCL_VERSION=2.22.3 (2.29.7) stands for
 * what NVIDIA's images set, since the machine itself has no libnccl for
 * nccl-run to find. One lab host per layout, shared by its rows.
 */
import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { libraryPathNccl } from '../../src/nccl/find-nccl.js';
import { readStack } from '../../src/plan/read-stack.js';
import { labRoot, type Suite } from '../lab/debian-root.js';
import {
  addWire,
  type Bind,
  buildHost,
  builtUnavailable,
  ncclBootstrap,
  ORACLE_LAYOUTS,
  runNcclRun,
  snapshotBuild,
} from '../lab/nccl-oracle.js';
import { Lab, netnsUnavailable } from '../lab/netns.js';
import { tier } from '../lab/tier.js';

/** Each real NCCL, the root it comes from, and what nccl-run must read of that root's stack. */
const STACKS: {
  suite: Suite;
  nccl: string;
  rules: string;
  library: string;
  torch: string;
  lab: string;
}[] = [
  {
    suite: 'trixie',
    nccl: '2.22.3',
    rules: '2.18-2.27',
    // Debian 13's x86_64-linux-gnu.conf lists /lib/x86_64-linux-gnu (merged /usr) first.
    library: '/lib/x86_64-linux-gnu/libnccl.so.2.22.3',
    torch: '2.6.0+debian',
    lab: 'ora',
  },
  {
    suite: 'sid',
    nccl: '2.29.7',
    rules: '2.28+',
    library: '/usr/lib/x86_64-linux-gnu/libnccl.so.2.29.7',
    torch: '2.14.1+debian',
    lab: 'ora29',
  },
];

type LayoutName = keyof typeof ORACLE_LAYOUTS;

interface Row {
  layout: LayoutName;
  /** What the row shows, for the table. */
  setting: string;
  /** torchrun's arguments. */
  torchrun: string[];
  /** The user's environment. */
  env?: Record<string, string>;
  /** The user's ~/.nccl.conf. */
  home?: string;
  /** nccl-run's intended decision, "IF ADDRESS". */
  decision: string;
  /** A warning nccl-run must give. */
  warns?: RegExp;
  /** nccl-run refuses the job: its exit status and message. */
  refuses?: { exitCode: number; message: RegExp };
  /** The NCCL_SOCKET_IFNAME nccl-run keeps, when not the row's own (env or ~/.nccl.conf). */
  keeps?: string | null;
  /**
   * Where the real NCCL of a stack binds otherwise than nccl-run reports
   * (what it does): a known difference, checked to be still there.
   */
  differs?: Partial<Record<Suite, string>>;
}

const job = (master: string) => [
  '--nnodes=2',
  '--node_rank=1',
  `--master_addr=${master}`,
  '--master_port=29500',
  'train.py',
];

const ROWS: Row[] = [
  {
    layout: 'mgmt-first',
    setting: 'nothing set',
    torchrun: job('master'),
    decision: 'eth1 198.18.2.5',
  },
  {
    layout: 'mgmt-first',
    setting: 'NCCL_SOCKET_IFNAME=^lo',
    torchrun: job('master'),
    env: { NCCL_SOCKET_IFNAME: '^lo' },
    decision: 'eth1 198.18.2.5',
    warns: /eth0.*does not reach the master.*eth1/,
  },
  {
    layout: 'mgmt-first',
    setting: 'NCCL_SOCKET_IFNAME=^docker,lo',
    torchrun: job('master'),
    env: { NCCL_SOCKET_IFNAME: '^docker,lo' },
    decision: 'eth1 198.18.2.5',
    warns: /eth0.*does not reach the master.*eth1/,
  },
  {
    layout: 'mgmt-first',
    setting: '~/.nccl.conf NCCL_SOCKET_IFNAME=^docker,lo',
    torchrun: job('master'),
    home: 'NCCL_SOCKET_IFNAME=^docker,lo\n',
    decision: 'eth1 198.18.2.5',
    warns: /eth0.*does not reach the master.*eth1/,
  },
  {
    layout: 'mgmt-first',
    setting: 'NCCL_COMM_ID=198.18.100.1:29600',
    torchrun: job('master'),
    env: { NCCL_COMM_ID: '198.18.100.1:29600' },
    decision: 'eth1 198.18.2.5',
    // 2.29.7 (sid) binds lo 127.0.0.1, with and without nccl-run's variables: its inverted IPv4
    // subnet test (releases.ts 2.29.2, PR #2047); by hand a COMM_ID of 127.0.0.1 gives eth0,
    // also under NCCL_SOCKET_IFNAME==eth1. 2.22 takes eth0, whose network holds the address.
    warns: /NCCL_COMM_ID/,
  },
  {
    layout: 'docker-bridges',
    setting: 'nothing set',
    torchrun: job('198.18.3.1'),
    decision: 'ens1 198.18.3.5',
  },
  {
    layout: 'docker-bridges',
    setting: 'NCCL_SOCKET_IFNAME=^docker,lo',
    torchrun: job('198.18.3.1'),
    env: { NCCL_SOCKET_IFNAME: '^docker,lo' },
    decision: 'ens1 198.18.3.5',
    warns: /br-5f3a9c1d.*does not reach the master.*ens1/,
  },
  {
    layout: 'docker-bridges',
    setting: 'NCCL_SOCKET_IFNAME=^=docker0',
    torchrun: job('198.18.3.1'),
    env: { NCCL_SOCKET_IFNAME: '^=docker0' },
    decision: 'ens1 198.18.3.5',
    warns: /lo.*does not reach the master.*ens1/,
  },
  {
    layout: 'virbr-vpn-first',
    setting: 'nothing set',
    torchrun: job('198.18.4.1'),
    decision: 'eth0 198.18.4.5',
  },
  {
    layout: 'prefix-names',
    setting: 'nothing set',
    torchrun: job('198.18.10.1'),
    decision: 'eth10 198.18.10.5',
  },
  {
    layout: 'prefix-names',
    setting: 'NCCL_SOCKET_IFNAME=eth1',
    torchrun: job('198.18.10.1'),
    env: { NCCL_SOCKET_IFNAME: 'eth1' },
    decision: 'eth10 198.18.10.5',
    warns: /eth1 .*does not reach the master.*eth10/,
  },
  {
    layout: 'prefix-names',
    setting: 'NCCL_SOCKET_IFNAME==eth1',
    torchrun: job('198.18.10.1'),
    env: { NCCL_SOCKET_IFNAME: '=eth1' },
    decision: 'eth1 198.18.100.5',
    warns: /eth1 .*does not reach the master.*eth10/,
  },
  {
    layout: 'prefix-names',
    setting: 'NCCL_SOCKET_IFNAME==^eth1',
    torchrun: job('198.18.10.1'),
    env: { NCCL_SOCKET_IFNAME: '=^eth1' },
    decision: 'none (exit 69)',
    refuses: { exitCode: 69, message: /=\^eth1.*matches no/ },
  },
  {
    layout: 'prefix-names',
    setting: 'NCCL_SOCKET_IFNAME=e (ignored)',
    torchrun: job('198.18.10.1'),
    env: { NCCL_SOCKET_IFNAME: 'e' },
    decision: 'eth10 198.18.10.5',
    keeps: null,
    warns: /shorter than 2 characters/,
  },
  {
    layout: 'ib0-unrelated',
    setting: 'nothing set',
    torchrun: job('198.18.5.1'),
    decision: 'eth0 198.18.5.5',
  },
  {
    layout: 'dual-stack',
    setting: 'nothing set, IPv6 master',
    torchrun: job('master'),
    decision: 'eth1 2001:db8:6::5',
  },
  {
    layout: 'dual-stack',
    setting: 'NCCL_SOCKET_IFNAME=^docker,lo, IPv6 master',
    torchrun: job('master'),
    env: { NCCL_SOCKET_IFNAME: '^docker,lo' },
    decision: 'eth1 2001:db8:6::5',
    warns: /eth0 fe80::.*link-local.*does not reach the master.*eth1/,
  },
  {
    layout: 'dual-stack',
    setting: 'NCCL_SOCKET_FAMILY=AF_INET6, IPv4 master',
    torchrun: job('198.18.6.1'),
    env: { NCCL_SOCKET_FAMILY: 'AF_INET6' },
    decision: 'eth1 198.18.6.5',
    warns: /NCCL_SOCKET_FAMILY=AF_INET6 \(yours, kept\)/,
  },
  {
    layout: 'ipv6-only-nic',
    setting: 'nothing set, IPv6 master',
    torchrun: job('2001:db8:7::1'),
    decision: 'eth1 2001:db8:7::5',
  },
  {
    layout: 'multi-address',
    setting: 'master on the 2nd IPv4 address',
    torchrun: job('198.18.8.1'),
    decision: 'eth1 198.18.9.5',
    warns: /198\.18\.9\.5/,
  },
  {
    layout: 'multi-address',
    setting: 'master on the older IPv6 address',
    torchrun: job('2001:db8:8::1'),
    decision: 'eth1 2001:db8:9::5',
    warns: /2001:db8:9::5/,
  },
  {
    layout: 'down-nic',
    setting: 'nothing set',
    torchrun: job('198.18.11.1'),
    decision: 'eth1 198.18.11.5',
  },
  {
    layout: 'single-node',
    setting: '--standalone',
    torchrun: ['--standalone', '--nproc_per_node=2', 'train.py'],
    decision: 'lo 127.0.0.1',
  },
  {
    layout: 'single-node',
    setting: 'one node, master ::1',
    torchrun: ['--nnodes=1', '--master_addr=::1', '--master_port=29500', 'train.py'],
    decision: 'lo 127.0.0.1',
  },
  {
    layout: 'single-node',
    setting: 'one node, master its own IPv6',
    torchrun: ['--nnodes=1', '--master_addr=2001:db8:12::5', '--master_port=29500', 'train.py'],
    decision: 'lo 127.0.0.1',
  },
  {
    layout: 'routed-master',
    setting: 'master behind a gateway',
    torchrun: job('198.19.200.10'),
    decision: 'eth1 198.18.20.5',
  },
];

interface Explained {
  decision: { interface: string; address: string; family: string };
  env: Record<string, string>;
  kept: Record<string, string>;
  keptFrom: Record<string, string>;
  warnings: string[];
  nccl: { version: string | null; rules: string; pick: Bind; devices: Bind[] };
  /** unmanaged.nccl carries the socket transport's devices beside the bootstrap's pick (issue 42). */
  unmanaged: { nccl: (Bind & { devices: Bind[] }) | null; gloo: Bind };
}

/** The bootstrap's pick alone, without the device list beside it. */
const bindOf = (bind: (Bind & { devices?: Bind[] }) | null | undefined): Bind | undefined =>
  bind === undefined
    ? undefined
    : bind === null
      ? null
      : { interface: bind.interface, address: bind.address };

const show = (bind: Bind | undefined): string =>
  bind === undefined ? '?' : bind === null ? 'none' : `${bind.interface} ${bind.address}`;

for (const stack of STACKS) {
  const root = netnsUnavailable === null ? labRoot(stack.suite) : null;
  const unavailable =
    netnsUnavailable ?? (root !== null && 'error' in root ? root.error : null) ?? builtUnavailable;
  const table: string[][] = [];
  const started = Date.now();

  tier(`NCCL oracle: the real NCCL ${stack.nccl} binds what nccl-run reports`, unavailable, () => {
    const lab = new Lab(stack.lab);
    const rootPath = root !== null && 'path' in root ? root.path : '/';
    let build = '';

    beforeAll(async () => {
      build = snapshotBuild();
      await addWire(lab);
      for (const [name, spec] of Object.entries(ORACLE_LAYOUTS)) await buildHost(lab, name, spec);
    }, 60_000);

    afterAll(async () => {
      await lab.cleanup();
      if (build !== '') rmSync(dirname(build), { recursive: true, force: true });
      const header = [
        'layout',
        'user setting',
        "nccl-run's decision",
        'NCCL binds',
        "nccl-run's NCCL pick",
        'unmanaged.nccl',
        'NCCL default',
        'equal?',
      ];
      const widths = header.map((h, i) =>
        Math.max(h.length, ...table.map((r) => (r[i] ?? '').length)),
      );
      const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(' | ');
      process.stdout.write(
        `\nNCCL oracle, NCCL ${stack.nccl} (${table.length} rows, ${((Date.now() - started) / 1000).toFixed(1)} s)\n${line(header)}\n${widths.map((w) => '-'.repeat(w)).join('-|-')}\n${table.map(line).join('\n')}\n`,
      );
    });

    it("reads the version of the root's own libnccl2 as ld.so finds it (the rows set NCCL_VERSION)", () => {
      expect(libraryPathNccl({}, rootPath)?.version).toEqual({
        version: stack.nccl,
        source: stack.library,
      });
    });

    it("reads the root's stack from its files: torchrun's torch, the NCCL it loads", () => {
      const read = readStack(
        ['torchrun'],
        { PATH: '/usr/bin:/bin', HOME: '/root' },
        { root: rootPath },
      );
      expect(read.torch).toMatchObject({
        version: stack.torch,
        source: '/usr/lib/python3/dist-packages/torch/version.py',
      });
      expect(read.nccl).toMatchObject({ version: stack.nccl, source: stack.library });
    });

    it.each(ROWS)('$layout, $setting', async (row) => {
      const spec = ORACLE_LAYOUTS[row.layout];
      const userEnv = { NCCL_VERSION: stack.nccl, ...row.env };
      const cli = await runNcclRun(
        build,
        lab,
        row.layout,
        spec.hostname,
        userEnv,
        ['explain', '--json', '--verify', 'none', ...row.torchrun],
        row.home,
      );
      const nothing = await ncclBootstrap(
        lab,
        row.layout,
        rootPath,
        stack.nccl,
        row.env ?? {},
        row.home,
      );
      if (row.refuses !== undefined) {
        const real = nothing.bind;
        table.push([
          row.layout,
          row.setting,
          `exit ${cli.exitCode}`,
          show(real),
          '-',
          '-',
          show(real),
          String(real === null && cli.exitCode === row.refuses.exitCode),
        ]);
        expect(cli.exitCode, cli.stderr).toBe(row.refuses.exitCode);
        expect(cli.stderr).toMatch(row.refuses.message);
        expect(real, nothing.log).toBeNull();
        return;
      }
      expect(cli.exitCode, cli.stderr).toBe(0);
      const explained = JSON.parse(cli.stdout) as Explained;
      // Exactly what the job's processes will have: the user's environment and what nccl-run sets.
      const given = await ncclBootstrap(
        lab,
        row.layout,
        rootPath,
        stack.nccl,
        { ...row.env, ...explained.env },
        row.home,
      );
      const decision = `${explained.decision.interface} ${explained.decision.address}`;
      // Where the user's own NCCL settings stay, NCCL binds by them, not by the decision.
      const ncclOwn =
        'NCCL_SOCKET_IFNAME' in explained.kept ||
        'NCCL_SOCKET_FAMILY' in explained.kept ||
        row.env?.NCCL_COMM_ID !== undefined;
      const known = row.differs?.[stack.suite];
      const equal =
        show(explained.nccl?.pick) === show(given.bind) &&
        show(bindOf(explained.unmanaged?.nccl)) === show(nothing.bind) &&
        (ncclOwn || decision === show(given.bind));
      table.push([
        row.layout,
        row.setting,
        decision,
        show(given.bind),
        show(explained.nccl?.pick),
        show(bindOf(explained.unmanaged?.nccl)),
        show(nothing.bind),
        String(equal),
      ]);

      expect(decision).toBe(row.decision);
      if (!ncclOwn)
        expect(given.bind, given.log).toEqual({
          interface: explained.decision.interface,
          address: explained.decision.address,
        });
      if (known !== undefined) {
        // The difference must still be there, or the row's note is stale.
        expect(equal, `NCCL ${stack.nccl} now agrees; drop the row's differs: ${known}`).toBe(
          false,
        );
        return;
      }
      expect(explained.nccl?.pick, given.log).toEqual(given.bind);
      expect(bindOf(explained.unmanaged?.nccl), nothing.log).toEqual(nothing.bind);
      // The socket transport's first device is the bootstrap's pick where NCCL_COMM_ID does not move it.
      if (row.env?.NCCL_COMM_ID === undefined) {
        expect(explained.nccl.devices[0] ?? null, given.log).toEqual(given.bind);
        expect(explained.unmanaged.nccl?.devices[0] ?? null, nothing.log).toEqual(nothing.bind);
      }
      expect(explained.nccl?.version).toBe(stack.nccl);
      const kept =
        row.keeps !== undefined
          ? (row.keeps ?? undefined)
          : (row.env?.NCCL_SOCKET_IFNAME ?? row.home?.match(/^NCCL_SOCKET_IFNAME=(.*)$/m)?.[1]);
      expect(explained.kept.NCCL_SOCKET_IFNAME).toBe(kept);
      if (row.home !== undefined)
        expect(explained.keptFrom.NCCL_SOCKET_IFNAME).toBe('/root/.nccl.conf');
      expect(explained.nccl?.rules).toBe(stack.rules);
      if (row.warns !== undefined) expect(explained.warnings.join('\n')).toMatch(row.warns);
    });
  });
}
