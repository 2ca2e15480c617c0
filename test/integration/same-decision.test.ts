/**
 * One truth on every command (issue 19 item 1, SPEC "The stack"): run, env,
 * check and explain reach the same decision, trace, variables and warnings
 * on the same host, or refuse it with the same error; only what they print
 * differs (test/lab/four-commands.ts reads both). A differential over every
 * host the lab has a picture of:
 * - the NCCL oracle's layouts (test/lab/nccl-oracle.ts), built for real in
 *   namespaces, with nothing set and with the user's NCCL settings that
 *   make NCCL's own pick walk down links (a kept NCCL_SOCKET_IFNAME under
 *   2.22, NCCL_COMM_ID);
 * - the reproduction: a worker whose data NIC, holding the master's
 *   subnet, is administratively down while the default route leads out
 *   through the management NIC. Before, explain said 69 and check said 0,
 *   using the management NIC, and run launched there;
 * - every facts fixture (`--facts`), with a master on its first network.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HostFacts } from '../../src/host/host-facts.js';
import { FIXTURES, loadFacts } from '../fixtures/facts/facts-fixtures.js';
import { BIN } from '../fixtures/nccl-run-process.js';
import {
  type Command,
  expectSameVerdicts,
  fourVerdicts,
  type Verdict,
} from '../lab/four-commands.js';
import {
  addWire,
  buildHost,
  builtUnavailable,
  type HostSpec,
  ORACLE_LAYOUTS,
  runNcclRun,
  snapshotBuild,
} from '../lab/nccl-oracle.js';
import { Lab, netnsUnavailable } from '../lab/netns.js';
import { tier } from '../lab/tier.js';

const job = (master: string) => [
  '--nnodes=2',
  '--node_rank=1',
  `--master_addr=${master}`,
  '--master_port=29500',
  'train.py',
];

const DOWN_DATA_NIC: HostSpec = {
  hostname: 'worker1',
  nics: [
    { name: 'mgmt0', addresses: ['203.0.113.2/24'] },
    { name: 'data0', addresses: ['198.18.205.2/24'], down: true },
  ],
  routes: [['default', 'via', '203.0.113.1', 'dev', 'mgmt0']],
  etcHosts: '127.0.0.1 localhost\n203.0.113.2 worker1\n198.18.205.1 master\n',
};

const LAYOUTS = { ...ORACLE_LAYOUTS, 'down-data-nic': DOWN_DATA_NIC };
type LayoutName = keyof typeof LAYOUTS;

/** Each layout's job: a master on the network the layout is about. */
const JOBS: Record<LayoutName, string[]> = {
  'mgmt-first': job('master'),
  'docker-bridges': job('198.18.3.1'),
  'virbr-vpn-first': job('198.18.4.1'),
  'prefix-names': job('198.18.10.1'),
  'ib0-unrelated': job('198.18.5.1'),
  'dual-stack': job('master'),
  'ipv6-only-nic': job('2001:db8:7::1'),
  'multi-address': job('198.18.8.1'),
  // The master on the down NIC's network.
  'down-nic': job('198.18.100.1'),
  'single-node': ['--standalone', '--nproc_per_node=2', 'train.py'],
  'routed-master': job('198.19.200.1'),
  'down-data-nic': job('master'),
};

interface Row {
  layout: LayoutName;
  setting: string;
  env: Record<string, string>;
}

const NCCL_SETTINGS: Array<Omit<Row, 'layout'>> = [
  {
    setting: 'NCCL_SOCKET_IFNAME=eth under 2.22',
    env: { NCCL_SOCKET_IFNAME: 'eth', NCCL_VERSION: '2.22.3' },
  },
  { setting: 'NCCL_COMM_ID', env: { NCCL_COMM_ID: '198.18.100.1:29600' } },
];

const ROWS: Row[] = [
  ...(Object.keys(LAYOUTS) as LayoutName[]).map((layout) => ({
    layout,
    setting: 'nothing set',
    env: {},
  })),
  ...(['down-nic', 'mgmt-first', 'down-data-nic'] as const).flatMap((layout) =>
    NCCL_SETTINGS.map((row) => ({ layout, ...row })),
  ),
];

tier(
  'the four commands on the lab hosts: one decision',
  netnsUnavailable ?? builtUnavailable,
  () => {
    const lab = new Lab('same');
    let build: string;
    const verdicts = new Map<string, Record<Command, Verdict>>();

    beforeAll(async () => {
      build = snapshotBuild();
      await addWire(lab);
      for (const [name, spec] of Object.entries(LAYOUTS)) await buildHost(lab, name, spec);
    }, 60_000);

    afterAll(async () => {
      await lab.cleanup();
      rmSync(dirname(build), { recursive: true, force: true });
    });

    it.each(ROWS)('$layout, $setting', async ({ layout, setting, env }) => {
      const result = await fourVerdicts(
        (argv) => runNcclRun(build, lab, layout, LAYOUTS[layout].hostname, env, argv),
        JOBS[layout],
      );
      verdicts.set(`${layout}, ${setting}`, result);
      expectSameVerdicts(result);
    });

    it('refuses the down data NIC on every command, as explain does (69), never the management NIC', async () => {
      const result =
        verdicts.get('down-data-nic, nothing set') ??
        (await fourVerdicts(
          (argv) => runNcclRun(build, lab, 'down-data-nic', 'worker1', {}, argv),
          JOBS['down-data-nic'],
        ));
      for (const verdict of Object.values(result)) {
        expect(verdict.exitCode).toBe(69);
        expect(verdict.error).toMatch(
          /198\.18\.205\.0\/24 on data0 contains master.*data0 is down/,
        );
      }
    });
  },
);

/** A master beside this host on its first global network: ADDRESS with the last part 1 (or 2). */
function neighbourMaster(facts: HostFacts): string | null {
  for (const iface of facts.interfaces) {
    if (iface.kind === 'loopback') continue;
    const own = iface.addresses.find((address) => address.scope === 'global');
    if (own === undefined) continue;
    const separator = own.family === 'ipv4' ? '.' : ':';
    const parts = own.address.split(separator);
    const last = parts.at(-1) === '1' ? '2' : '1';
    return [...parts.slice(0, -1), last].join(separator);
  }
  return null;
}

describe('the four commands on every facts fixture (--facts): one decision', () => {
  const cwd = mkdtempSync(join(tmpdir(), 'ncr-same-'));
  afterAll(() => rmSync(cwd, { recursive: true, force: true }));

  it.each(FIXTURES)('%s', async (name) => {
    const file = new URL(`../fixtures/facts/${name}.json`, import.meta.url).pathname;
    const master = neighbourMaster(loadFacts(name));
    const torchrun = master === null ? ['--standalone', 'train.py'] : job(master);
    const result = await fourVerdicts(
      async (argv) => {
        const run = await execa(BIN, argv, {
          reject: false,
          cwd,
          extendEnv: false,
          env: { PATH: process.env.PATH ?? '', HOME: cwd },
        });
        return {
          exitCode: run.exitCode ?? -1,
          stdout: String(run.stdout),
          stderr: String(run.stderr),
        };
      },
      ['--facts', file, ...torchrun],
    );
    expectSameVerdicts(result);
  });
});
