/**
 * Gloo as the oracle (issue 19 item 4, SPEC "What it exports" and "Outputs"):
 * a 2-rank Gloo group across two namespaced hosts, made by real torch (the
 * host's, and Debian 13's 2.6 in the lab root), observed through an
 * LD_PRELOAD shim (test/lab/gloo-oracle.ts). Rank 1's host has a data NIC,
 * a management NIC, two down NICs that keep their addresses (one above
 * rank 0's address, which rank 1 then connects from, one below, which rank 0
 * connects to), an IPv6-link-local-only NIC and a docker0 without carrier; its hostname resolves to each of
 * them in turn, to 127.0.1.1, to an address on no interface, or to nothing,
 * and the user's GLOO_SOCKET_IFNAME takes the values users set.
 *
 * nccl-run runs on that host as a user would (explain --json, --verify
 * none, rank 1 of 2). Where it keeps the user's value, what Gloo binds must
 * be its `unmanaged.gloo` and the job must work (unless a warning says why
 * it may not); where it refuses (78), the
 * real job must fail; where it sets nothing itself, `unmanaged.gloo` must be
 * the address Gloo listened on, or null where Gloo made no device.
 */
import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { labRoot, torch26Env } from '../lab/debian-root.js';
import {
  buildShim,
  type GlooCase,
  type GlooObserved,
  gccUnavailable,
  runGlooCases,
  type TorchSite,
} from '../lab/gloo-oracle.js';
import { HOST_TORCHRUN, torchrunInterpreter, torchrunVersion } from '../lab/host-torchrun.js';
import { builtUnavailable, type CliRun, runNcclRun, snapshotBuild } from '../lab/nccl-oracle.js';
import { Lab, netnsUnavailable } from '../lab/netns.js';
import { tier } from '../lab/tier.js';

const root = netnsUnavailable === null ? labRoot('trixie') : null;
const hostPython = torchrunInterpreter();
const unavailable =
  netnsUnavailable ??
  (root !== null && 'error' in root ? root.error : null) ??
  builtUnavailable ??
  gccUnavailable ??
  (hostPython === null ? `${HOST_TORCHRUN} has no #! line naming its Python` : null);

const MASTER = '198.18.220.1';
const PORT = 29500;
/**
 * A case's group timeout: veths answer in milliseconds, and a group that
 * cannot connect fails after five times it. Where only the address Gloo
 * listens on is compared (the hostname cases), half of it.
 */
const CASE_SECONDS = 1;

const HOSTS_A = `127.0.0.1 localhost\n${MASTER} nodea\n`;
const HOSTS_B = [
  '127.0.0.1 localhost',
  `${MASTER} nodea`,
  '198.18.220.2 h-data',
  '203.0.113.2 h-mgmt',
  '127.0.1.1 h-loop',
  '198.18.221.2 h-down',
  '198.18.99.9 h-nowhere',
  '198.19.250.1 h-docker',
  '',
].join('\n');

interface Row {
  id: string;
  /** What the row shows, for the table. */
  setting: string;
  hostname: string;
  gloo: string | null;
}

const ROWS: Row[] = [
  { id: 'host-data', setting: 'hostname on the data NIC', hostname: 'h-data', gloo: null },
  { id: 'host-mgmt', setting: 'hostname on the management NIC', hostname: 'h-mgmt', gloo: null },
  { id: 'host-loop', setting: 'hostname on 127.0.1.1', hostname: 'h-loop', gloo: null },
  // Found by the fuzz (test/lab/nccl-fuzz.ts): the address stays bindable while its link is down.
  {
    id: 'host-down',
    setting: 'hostname on a down NIC (it keeps its IPv4 address)',
    hostname: 'h-down',
    gloo: null,
  },
  { id: 'host-none', setting: 'hostname unresolvable', hostname: 'h-none', gloo: null },
  {
    id: 'host-nowhere',
    setting: 'hostname on an address no interface holds',
    hostname: 'h-nowhere',
    gloo: null,
  },
  {
    id: 'host-docker',
    setting: 'hostname on docker0 (no carrier)',
    hostname: 'h-docker',
    gloo: null,
  },
  ...(
    [
      ['data0', 'data0'],
      ['data0-trailing', 'data0,'],
      ['data0-mgmt0', 'data0,mgmt0'],
      ['empty-first', ',data0'],
      ['empty-middle', 'data0,,mgmt0'],
      ['lo', 'lo'],
      ['down0', 'down0'],
      ['down1', 'down1'],
      ['ll0', 'll0'],
      ['docker0', 'docker0'],
      ['missing', 'eth9'],
      ['nccl-syntax', '^lo'],
      ['address', '198.18.220.2'],
    ] as const
  ).map(([id, value]) => ({
    id: `kept-${id}`,
    setting: `GLOO_SOCKET_IFNAME=${value}`,
    hostname: 'h-data',
    gloo: value,
  })),
];

/**
 * Rank 0's own GLOO_SOCKET_IFNAME: as many devices as rank 1 asks for, on
 * its working NICs (a cluster sets one value everywhere; torch makes one
 * context per device, and ranks with different counts never meet).
 */
function rankZeroIfname(value: string | null): string | null {
  if (value === null) return null;
  const pieces = value.split(',').filter((piece, i, all) => piece !== '' || i < all.length - 1);
  return pieces.map((_, i) => (i % 2 === 0 ? 'data0' : 'mgmt0')).join(',');
}

const CASES: GlooCase[] = ROWS.map((row) => ({
  id: row.id,
  seconds: row.gloo === null ? CASE_SECONDS / 2 : CASE_SECONDS,
  ranks: [
    { hostname: 'nodea', GLOO_SOCKET_IFNAME: rankZeroIfname(row.gloo) },
    { hostname: row.hostname, GLOO_SOCKET_IFNAME: row.gloo },
  ],
}));

interface Explained {
  unmanaged?: { gloo: { interface: string; address: string } | null };
  warnings: string[];
}

tier('Gloo oracle: real torch and Gloo against nccl-run', unavailable, () => {
  const lab = new Lab('gloo');
  let shimDir: string;
  let build: string;
  const results: Array<{ label: string; torch: string; observed: Map<string, GlooObserved> }> = [];
  const cli = new Map<string, CliRun>();

  /** Rank 0's host A and rank 1's host B, joined by data, management, down and link-local links. */
  async function pair(a: string, b: string): Promise<void> {
    await lab.host(a, HOSTS_A);
    await lab.host(b, HOSTS_B);
    await lab.link(a, 'data0', b, 'data0');
    await lab.addr(a, 'data0', `${MASTER}/24`);
    await lab.addr(b, 'data0', '198.18.220.2/24');
    await lab.link(a, 'mgmt0', b, 'mgmt0');
    await lab.addr(a, 'mgmt0', '203.0.113.1/24');
    await lab.addr(b, 'mgmt0', '203.0.113.2/24');
    await lab.link(a, 'down0', b, 'down0');
    await lab.addr(a, 'down0', '198.18.221.1/24');
    await lab.addr(b, 'down0', '198.18.221.2/24');
    await lab.ip(b, 'link', 'set', 'down0', 'down');
    // Down too, but below rank 0's address: rank 0 is the side that connects to it.
    await lab.link(a, 'down1', b, 'down1');
    await lab.addr(a, 'down1', '198.18.200.1/24');
    await lab.addr(b, 'down1', '198.18.200.2/24');
    await lab.ip(b, 'link', 'set', 'down1', 'down');
    // Link-local only, without duplicate address detection (a tentative address cannot be bound).
    await lab.link(a, 'll0', b, 'll0');
    for (const [host, address] of [
      [a, 'fe80::a/64'],
      [b, 'fe80::b/64'],
    ] as const) {
      await lab.ip(host, 'addr', 'flush', 'dev', 'll0');
      await lab.addr(host, 'll0', address);
    }
    // docker0 as on a host with no container running: a bridge without ports, no carrier.
    await lab.ip(b, 'link', 'add', 'docker0', 'type', 'bridge');
    await lab.ip(b, 'link', 'set', 'docker0', 'up');
    await lab.addr(b, 'docker0', '198.19.250.1/24');
  }

  beforeAll(async () => {
    shimDir = buildShim();
    build = snapshotBuild();
    await pair('a1', 'b1');
    await pair('a2', 'b2');
    const sites: Array<[string, [string, string], TorchSite]> = [
      [
        "the host's torch",
        ['a1', 'b1'],
        {
          root: '/',
          python: hostPython as string,
          env: torchrunVersion()?.startsWith('1.') ? {} : torch26Env,
        },
      ],
      [
        "Debian 13's torch",
        ['a2', 'b2'],
        { root: (root as { path: string }).path, python: '/usr/bin/python3', env: torch26Env },
      ],
    ];
    const [ran] = await Promise.all([
      Promise.all(
        sites.map(async ([label, hosts, site]) => ({
          label,
          ...(await runGlooCases(lab, hosts, MASTER, PORT, site, shimDir, CASES)),
        })),
      ),
      // Four at a time: each is a Node start, and the ranks share the two cores.
      ...[0, 1, 2, 3].map(async (lane) => {
        for (const row of ROWS.filter((_, i) => i % 4 === lane)) {
          const env: Record<string, string> =
            row.gloo === null ? {} : { GLOO_SOCKET_IFNAME: row.gloo };
          cli.set(
            row.id,
            await runNcclRun(build, lab, 'b1', row.hostname, env, [
              ...['explain', '--json', '--verify', 'none'],
              ...['--nnodes=2', '--node_rank=1', `--master_addr=${MASTER}`],
              ...[`--master_port=${PORT}`, 'train.py'],
            ]),
          );
        }
      }),
    ]);
    results.push(...ran);
  }, 240_000);

  afterAll(async () => {
    await lab.cleanup();
    if (shimDir !== undefined) rmSync(shimDir, { recursive: true, force: true });
    if (build !== undefined) rmSync(dirname(build), { recursive: true, force: true });
  });

  it('prints the table of both torches beside nccl-run', () => {
    const header = ['case', 'nccl-run', ...results.map((r) => `${r.label} ${r.torch}`)];
    const rows = ROWS.map((row) => {
      const run = cli.get(row.id) as CliRun;
      const unmanaged =
        run.exitCode === 0
          ? ((JSON.parse(run.stdout) as Explained).unmanaged?.gloo?.address ?? 'null')
          : `exit ${run.exitCode}`;
      return [
        row.setting,
        unmanaged,
        ...results.map((r) => {
          const seen = r.observed.get(row.id);
          const verdict = seen?.outcome === 'ok' ? 'ok' : 'fails';
          return `${seen?.listens.join(',') || '-'} ${verdict} ${seen?.seconds ?? '?'}s`;
        }),
      ];
    });
    const widths = header.map((_, i) =>
      Math.max(...[header, ...rows].map((r) => r[i]?.length ?? 0)),
    );
    const line = (cells: string[]) =>
      cells.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join(' | ');
    process.stdout.write(`\nGloo oracle\n${[header, ...rows].map(line).join('\n')}\n`);
    expect(results).toHaveLength(2);
  });

  it.each(ROWS)('$setting', (row) => {
    const run = cli.get(row.id) as CliRun;
    for (const { label, torch, observed } of results) {
      const seen = observed.get(row.id) as GlooObserved;
      const where = `${label} ${torch}: ${seen.outcome}; listened on ${seen.listens.join(', ') || 'nothing'}`;
      if (run.exitCode === 78) {
        // A refusal is only for what certainly fails.
        expect(seen.outcome, where).not.toBe('ok');
        continue;
      }
      expect(run.exitCode, run.stderr).toBe(0);
      const explained = JSON.parse(run.stdout) as Explained;
      const gloo = explained.unmanaged?.gloo ?? null;
      expect(gloo?.address ?? null, where).toBe(seen.listens[0] ?? null);
      // A kept value nccl-run lets through works, unless a warning says why it may not.
      const warned = explained.warnings.some((warning) =>
        warning.startsWith(`GLOO_SOCKET_IFNAME='${row.gloo}' (set in the environment) names `),
      );
      if (row.gloo !== null && !warned) expect(seen.outcome, where).toBe('ok');
    }
  });
});
