/**
 * The pure half of a plan (src/plan/derive.ts): from what was read and the
 * chain's decision, the variables, the warnings in their order, what NCCL
 * and Gloo bind, and the data plane. Its inputs here are the NCCL oracle's
 * management-first host (eth0 the management NIC, first in kernel order;
 * eth1 on the master's network) and the user's settings as
 * src/plan/settings.ts reads them, NCCL_CONF_FILE a file of this test's.
 */

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { settleOptions } from '../../../src/options/settle-options.js';
import { derive, type PlanInputs } from '../../../src/plan/derive.js';
import type { Stack } from '../../../src/plan/read-stack.js';
import { userEnvironment, userSettings } from '../../../src/plan/settings.js';
import { runChain } from '../../../src/resolve/run-chain.js';
import { DEFAULT_CHAIN } from '../../../src/resolve/strategies/index.js';
import { torchrunTable } from '../../../src/torch/torchrun-table.js';
import { loadFacts, makeContext } from '../../fixtures/facts/facts-fixtures.js';
import { endpointOrigins, makeJob, originNamed } from '../../fixtures/job-shape.js';
import { NO_PLUGIN } from '../../fixtures/rdma/net-plugin-search.js';
import { nodeFacts } from '../../fixtures/readiness.js';

const home = mkdtempSync(join(tmpdir(), 'derive-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));

const facts = loadFacts('lab-mgmt-first');
const MASTER = '198.18.2.1';

function stack(torch: string, nccl: string): Stack {
  return {
    torch: {
      version: torch,
      source: 'torch/version.py',
      sitePackages: null,
      prefix: null,
      known: 'read',
      via: [],
      entry: 'run',
    },
    nccl: { version: nccl, source: 'libnccl.so.2', library: null },
    envPlugin: null,
    warnings: [],
    clearedBy: null,
  };
}

/** What plan.ts would read for a two-node static job whose master is 198.18.2.1, with `env` set. */
function inputs(env: Record<string, string>, force = false, torch = '2.6.0') {
  const settled = settleOptions(force ? { force: true } : {}, {}, home);
  const settings = userSettings(userEnvironment(settled, env), '2.29.7', force);
  const job = makeJob({
    master: { host: MASTER, port: 29500, ...endpointOrigins('--master-addr, port default') },
    masterAddr: MASTER,
    nnodes: { min: 2, max: 2, origin: originNamed('--nnodes') },
    nodeRank: { value: 1, origin: originNamed('--node-rank') },
  });
  const context = makeContext({
    master: { host: MASTER, addresses: [MASTER] },
    ncclRules: '2.28+',
    userNcclIfname: settings.kept.ifname,
    userNcclFamily: settings.kept.family,
  });
  const planned: PlanInputs = {
    settings,
    stack: stack(torch, '2.29.7'),
    torchrun: torchrunTable(torch),
    job,
    host: {
      facts,
      master: { ...(job.master as NonNullable<typeof job.master>), addresses: [MASTER] },
      family: 'ipv4',
      masterOfFamily: [MASTER],
      routesToMaster: [],
      hostnameAddresses: ['198.18.100.5'],
      commIdAddress: null,
      masterAddrAddresses: [],
      machine: null,
    },
    context,
    verify: { level: 'master', capped: null },
    role: null,
    meeting: null,
    unknownTorch: null,
    netPlugin: NO_PLUGIN,
  };
  return { planned, settled, decision: runChain(DEFAULT_CHAIN, facts, context) };
}

describe('derive', () => {
  it('sets the variables on the decision; unmanaged, NCCL and Gloo would take the management NIC', () => {
    const { planned, settled, decision } = inputs({ PATH: '/usr/bin' });
    const plan = derive(planned, decision, nodeFacts(), settled, ['--nnodes=2', 'train.py']);
    expect(plan.decision).toMatchObject({ interface: 'eth1', address: '198.18.2.5' });
    expect(plan.variables.set).toMatchObject({
      NCCL_SOCKET_IFNAME: '=eth1',
      GLOO_SOCKET_IFNAME: 'eth1',
      NCCL_SOCKET_FAMILY: 'AF_INET',
    });
    expect(plan.childEnv).toMatchObject({ PATH: '/usr/bin', NCCL_SOCKET_IFNAME: '=eth1' });
    expect(plan.nccl).toMatchObject({
      version: '2.29.7',
      rules: '2.28+',
      pick: { interface: 'eth1', address: '198.18.2.5' },
    });
    expect(plan.unmanaged).toMatchObject({
      nccl: { interface: 'eth0', address: '198.18.100.5' },
      gloo: { interface: 'eth0', address: '198.18.100.5' },
    });
    expect(plan.unmanaged.ncclDevices[0]).toEqual({ interface: 'eth0', address: '198.18.100.5' });
    expect(plan.nccl.devices).toEqual([{ interface: 'eth1', address: '198.18.2.5' }]);
    expect(plan.transport.verdict.kind).toBe('socket');
    expect(plan.command).toEqual(['torchrun', '--nnodes=2', 'train.py']);
  });

  it("keeps a user's NCCL_SOCKET_IFNAME from NCCL's file, says where it came from, and warns first that NCCL's pick misses the master", () => {
    const file = join(home, 'nccl.conf');
    writeFileSync(file, 'NCCL_SOCKET_IFNAME=eth0\n');
    try {
      const { planned, settled, decision } = inputs({ NCCL_CONF_FILE: file });
      const plan = derive(planned, decision, nodeFacts(), settled, ['train.py']);
      expect(plan.variables.kept).toEqual({ NCCL_SOCKET_IFNAME: 'eth0' });
      expect(plan.keptFrom.NCCL_SOCKET_IFNAME).toEqual({
        name: 'NCCL_SOCKET_IFNAME',
        from: 'nccl-conf',
        file,
      });
      // NCCL reads the file itself: nccl-run never copies it into the child's environment.
      expect(plan.childEnv).not.toHaveProperty('NCCL_SOCKET_IFNAME');
      expect(plan.nccl.pick).toEqual({ interface: 'eth0', address: '198.18.100.5' });
      expect(plan.variables.warnings[0]).toMatch(/eth0/);
      // --force: nccl-run's own value, in the environment, beats the file.
      const forced = inputs({ NCCL_CONF_FILE: file }, true);
      const replaced = derive(forced.planned, forced.decision, nodeFacts(), forced.settled, [
        'train.py',
      ]);
      expect(replaced.variables.set.NCCL_SOCKET_IFNAME).toBe('=eth1');
      expect(replaced.nccl.pick).toEqual({ interface: 'eth1', address: '198.18.2.5' });
    } finally {
      rmSync(file);
    }
  });
});
