/**
 * audit on the real NCCL's own lines (issue 43): the lab roots' NCCL 2.22.3
 * (Debian 13) and 2.29.7 (sid) on two namespaced "hosts" whose first
 * interfaces are docker bridges, the trap NCCL takes by itself. Each
 * process runs ncclGetUniqueId (the bootstrap line) and ncclCommInitRank,
 * which without a GPU ends in NCCL's own WARN lines (2.29's timestamped);
 * there is no data plane without a GPU, so `Using network` never comes
 * (test/fixtures/nccl-logs cover those lines from NCCL's format strings).
 *
 * The environment is what `nccl-run env --nccl-log DIR` exports, so NCCL
 * writes its lines through NCCL_DEBUG_FILE into DIR; audit must read the
 * bootstrap each process really bound, and tell the trap (both hosts on the
 * bridge: a failure, exit 75) from the job nccl-run set up (exit 0). The
 * same lines on stdout, behind torchrun's `[default0]:` prefix, are read
 * from standard input.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { inRoot, labRoot, type Suite } from '../lab/debian-root.js';
import {
  addWire,
  buildHost,
  builtUnavailable,
  type HostSpec,
  runNcclRun,
  snapshotBuild,
} from '../lab/nccl-oracle.js';
import { Lab, netnsUnavailable } from '../lab/netns.js';
import { tier } from '../lab/tier.js';

const STACKS: { suite: Suite; nccl: string; bootstrap: string }[] = [
  // bootstrap.cc "Bootstrap : Using%s" at v2.22.3-1, "Bootstrap: Using%s" from v2.24.3-1.
  { suite: 'trixie', nccl: '2.22.3', bootstrap: 'Bootstrap : Using' },
  { suite: 'sid', nccl: '2.29.7', bootstrap: 'Bootstrap: Using' },
];

/**
 * A host whose first interfaces are docker's bridges; the job's network is
 * eth1. NCCL skips `docker*` and `lo` by itself (misc/socket.cc, its default
 * `^docker,lo`), not a compose network's `br-*`, which it takes.
 */
const host = (name: string, own: string): HostSpec => ({
  hostname: name,
  nics: [
    { name: 'docker0', kind: 'bridge', addresses: ['203.0.113.1/26'] },
    { name: 'br-5f3a9c1d', kind: 'bridge', addresses: ['203.0.113.65/26'] },
    { name: 'eth1', addresses: [`${own}/24`] },
  ],
  etcHosts: `127.0.0.1 localhost\n${own} ${name}\n198.18.2.1 master\n`,
});
const HOSTS = { node1: host('node1', '198.18.2.5'), node2: host('node2', '198.18.2.6') };

/** ncclGetUniqueId, then ncclCommInitRank of one rank (no GPU: it fails, NCCL says why). */
const PROBE = [
  'import ctypes, sys',
  'nccl = ctypes.CDLL("libnccl.so.2")',
  'class UniqueId(ctypes.Structure):',
  '    _fields_ = [("internal", ctypes.c_char * 128)]',
  'uid = UniqueId()',
  'if nccl.ncclGetUniqueId(ctypes.byref(uid)) != 0: sys.exit(3)',
  'comm = ctypes.c_void_p()',
  'nccl.ncclCommInitRank(ctypes.byref(comm), 1, uid, 0)',
].join('\n');

interface AuditJson {
  ranks: {
    host: string;
    pid: number;
    nccl: { version: string | null; bootstrap: { interface: string; address: string } | null };
    warnings: string[];
  }[];
  findings: { level: string; message: string; ranks: string[] }[];
}

for (const stack of STACKS) {
  const root = netnsUnavailable === null ? labRoot(stack.suite) : null;
  const unavailable =
    netnsUnavailable ?? (root !== null && 'error' in root ? root.error : null) ?? builtUnavailable;

  tier(`audit reads the real NCCL ${stack.nccl}'s own lines`, unavailable, () => {
    const lab = new Lab('aud');
    const rootPath = root !== null && 'path' in root ? root.path : '/';
    let build = '';
    let work = '';

    beforeAll(async () => {
      build = snapshotBuild();
      work = mkdtempSync('/tmp/aud-');
      await addWire(lab);
      for (const [name, spec] of Object.entries(HOSTS)) await buildHost(lab, name, spec);
    }, 60_000);

    afterAll(async () => {
      await lab.cleanup();
      if (build !== '') rmSync(dirname(build), { recursive: true, force: true });
      if (work !== '') {
        rmSync(work, { recursive: true, force: true });
        rmSync(`${rootPath}${work}`, { recursive: true, force: true });
      }
    });

    /** NCCL in the root on `name`, with exactly `env`; `dir` (a host folder) seen at the same path inside. */
    async function runNccl(name: keyof typeof HOSTS, env: Record<string, string>, dir: string) {
      mkdirSync(dir, { recursive: true });
      mkdirSync(`${rootPath}${dir}`, { recursive: true });
      const vars = Object.entries(env).map(([k, v]) => `${k}=${v}`);
      const argv = [
        'ip',
        'netns',
        'exec',
        lab.ns(name),
        ...inRoot(
          rootPath,
          name,
          '/usr/bin/env',
          ['-i', ...vars, '/usr/bin/python3', '-c', PROBE],
          [[dir, dir]],
        ),
      ];
      return execa(argv[0] as string, argv.slice(1), { reject: false, all: true, timeout: 20_000 });
    }

    /** What `nccl-run env --format json --nccl-log DIR` exports on `name` for a two-node job. */
    async function exported(name: keyof typeof HOSTS, dir: string) {
      const cli = await runNcclRun(build, lab, name, name, { NCCL_VERSION: stack.nccl }, [
        'env',
        '--format',
        'json',
        '--verify',
        'none',
        '--nccl-log',
        dir,
        '--nnodes=2',
        `--node_rank=${name === 'node1' ? 0 : 1}`,
        '--master_addr=198.18.2.1',
        '--master_port=29500',
        'train.py',
      ]);
      expect(cli.exitCode, cli.stderr).toBe(0);
      return JSON.parse(cli.stdout) as Record<string, string>;
    }

    async function audit(args: string[], input?: string) {
      const run = await execa(process.execPath, [build, 'audit', '--json', ...args], {
        reject: false,
        input,
        timeout: 20_000,
      });
      return {
        exitCode: run.exitCode,
        json: run.stdout === '' ? null : (JSON.parse(run.stdout) as AuditJson),
        stderr: run.stderr,
      };
    }

    it("through nccl-run's --nccl-log: NCCL_DEBUG_FILE per process, the bootstrap on eth1, exit 0", async () => {
      const dir = join(work, 'fixed');
      for (const name of ['node1', 'node2'] as const) {
        const env = await exported(name, dir);
        expect(env).toMatchObject({
          NCCL_SOCKET_IFNAME: '=eth1',
          NCCL_DEBUG: 'INFO',
          NCCL_DEBUG_SUBSYS: 'INIT,BOOTSTRAP,NET,ENV',
          NCCL_DEBUG_FILE: `${dir}/%h.%p.log`,
        });
        const nccl = await runNccl(name, env, dir);
        // Every line went to the file: NCCL's stdout and stderr stay the job's.
        expect(nccl.all, 'NCCL wrote to stdout').toBe('');
      }
      const files = readdirSync(dir).sort();
      expect(files).toHaveLength(2);
      expect(files.map((f) => f.replace(/\.\d+\.log$/, ''))).toEqual(['node1', 'node2']);
      const { exitCode, json, stderr } = await audit([dir]);
      expect(exitCode, stderr).toBe(0);
      const bound = json?.ranks.map((r) => [r.host, r.nccl.bootstrap]);
      expect(bound).toEqual([
        ['node1', { interface: 'eth1', address: '198.18.2.5' }],
        ['node2', { interface: 'eth1', address: '198.18.2.6' }],
      ]);
      // NCCL said NCCL_SOCKET_IFNAME back (misc/socket.cc ENV), and why it stopped (no GPU).
      expect(json?.ranks.every((r) => r.warnings.some((w) => /Cuda failure/.test(w)))).toBe(true);
      // No GPU, no communicator: no version line (init.cc showVersion comes after the CUDA checks).
      expect(json?.ranks.map((r) => r.nccl.version)).toEqual([null, null]);
      expect(json?.findings.filter((f) => f.level === 'failure')).toEqual([]);
    });

    it("NCCL alone on the trap: both hosts bootstrap on compose's bridge, a failure (exit 75)", async () => {
      const dir = join(work, 'trap');
      const env = {
        NCCL_DEBUG: 'INFO',
        NCCL_DEBUG_SUBSYS: 'INIT,BOOTSTRAP,NET,ENV',
        NCCL_DEBUG_FILE: `${dir}/%h.%p.log`,
      };
      mkdirSync(dir, { recursive: true });
      for (const name of ['node1', 'node2'] as const) await runNccl(name, env, dir);
      const { exitCode, json } = await audit([dir]);
      expect(exitCode).toBe(75);
      expect(json?.ranks.map((r) => r.nccl.bootstrap)).toEqual([
        { interface: 'br-5f3a9c1d', address: '203.0.113.65' },
        { interface: 'br-5f3a9c1d', address: '203.0.113.65' },
      ]);
      const bridge = json?.findings.find((f) => /container or VM bridge/.test(f.message));
      expect(bridge?.level).toBe('failure');
      expect(bridge?.ranks).toHaveLength(2);
    });

    it("the same lines on stdout behind torchrun's [default0]: prefix, from standard input", async () => {
      const dir = join(work, 'stdout');
      const nccl = await runNccl('node1', { NCCL_DEBUG: 'INFO', NCCL_SOCKET_IFNAME: '=eth1' }, dir);
      expect(String(nccl.all)).toContain(`NCCL INFO ${stack.bootstrap} eth1:198.18.2.5<0>`);
      const prefixed = String(nccl.all)
        .split('\n')
        .map((line) => `[default0]:${line}`)
        .join('\n');
      const { exitCode, json, stderr } = await audit(['-'], prefixed);
      expect(exitCode, stderr).toBe(0);
      expect(json?.ranks).toHaveLength(1);
      expect(json?.ranks[0]?.nccl.bootstrap).toEqual({ interface: 'eth1', address: '198.18.2.5' });
    });

    it('NCCL_DEBUG=WARN: no INFO line, exit 66 saying how to get them', async () => {
      const dir = join(work, 'warn');
      const nccl = await runNccl('node1', { NCCL_DEBUG: 'WARN' }, dir);
      const { exitCode, stderr } = await audit(['-'], String(nccl.all));
      expect(exitCode).toBe(66);
      expect(stderr).toMatch(/NCCL_DEBUG=INFO.*--nccl-log DIR/);
    });
  });
}
