import { isIP } from 'node:net';
import { describe, expect, it } from 'vitest';
import { decideVariables, type VariablesInput } from '../../../src/env/decide-variables.js';
import { otherMasterAddr } from '../../../src/env/master-network.js';
import { ConfigError } from '../../../src/errors.js';
import type { HostFacts } from '../../../src/host/host-facts.js';
import { routeTo } from '../../../src/host/routes.js';
import type { JobShape } from '../../../src/job/job-shape.js';
import { isSingleNode } from '../../../src/job/single-node.js';
import type { Decision } from '../../../src/resolve/decision.js';
import { buildExcludes } from '../../../src/resolve/excludes.js';
import { loadFacts } from '../../fixtures/facts/facts-fixtures.js';
import { endpointOrigins, makeJob, originNamed } from '../../fixtures/job-shape.js';

/** Where torchrun reads PET_LOCAL_ADDR from: a PET_* variable (errors.ts Origin). */
const pet = { name: 'PET_LOCAL_ADDR', from: 'pet' } as const;

// node-0: eno1 (1 Gb/s, 203.0.113.10/24, default route) and ens3f0 (100 Gb/s, 198.18.60.10/24).
const facts = loadFacts('master-node');
const MASTER = '198.18.60.20';

function job(overrides: Partial<JobShape> = {}): JobShape {
  return makeJob({
    master: { host: MASTER, port: 29500, ...endpointOrigins('argv --master-addr') },
    masterAddr: MASTER,
    nnodes: { min: 2, max: 2, origin: originNamed('argv --nnodes') },
    nodeRank: { value: 1, origin: originNamed('argv --node-rank') },
    ...overrides,
  });
}

function decision(overrides: Partial<Decision> = {}): Decision {
  return {
    interface: 'ens3f0',
    address: '198.18.60.10',
    family: 'ipv4',
    strategy: 'subnet',
    reason: `198.18.60.0/24 on ens3f0 contains master ${MASTER}`,
    trace: [],
    ...overrides,
  };
}

type Overrides = Partial<VariablesInput> & Partial<VariablesInput['options']>;

/** The input plan/plan.ts would give: the names it would resolve are address literals here. */
async function input(overrides: Overrides = {}): Promise<VariablesInput> {
  const {
    ncclDebug = null,
    ncclDebugSubsys = null,
    requireTransport = null,
    force = false,
    ...rest
  } = overrides;
  const chosenFacts: HostFacts = overrides.facts ?? facts;
  const chosenJob = overrides.job ?? job();
  const masterAddresses = overrides.masterAddresses ?? [MASTER];
  const masterAddr = otherMasterAddr(chosenJob);
  return {
    decision: decision(),
    facts: chosenFacts,
    job: chosenJob,
    options: { ncclDebug, ncclDebugSubsys, requireTransport, force },
    env: {},
    singleNode: isSingleNode(chosenJob, masterAddresses, chosenFacts),
    routesToMaster: await routeTo(masterAddresses, chosenFacts, false),
    masterAddresses,
    masterAddrAddresses: masterAddr !== null && isIP(masterAddr) !== 0 ? [masterAddr] : [],
    machine: null,
    excludes: buildExcludes([], false),
    origin: (name) => ({ name, from: 'env' }),
    ...rest,
  };
}

const OURS = {
  NCCL_SOCKET_IFNAME: '=ens3f0',
  GLOO_SOCKET_IFNAME: 'ens3f0',
  TP_SOCKET_IFNAME: 'ens3f0',
  NCCL_SOCKET_FAMILY: 'AF_INET',
  PET_LOCAL_ADDR: '198.18.60.10',
};

describe('decideVariables: what is set, kept and replaced', () => {
  it("sets the interface variables in SPEC's order, NCCL's with = for an exact match", async () => {
    const variables = await decideVariables(await input());
    expect(variables).toEqual({ set: OURS, kept: {}, warnings: [] });
    expect(Object.keys(variables.set)).toEqual(Object.keys(OURS));
  });

  it('sets AF_INET6 for an IPv6 decision', async () => {
    const v6 = decision({ address: '2001:db8:60::10', family: 'ipv6' });
    const variables = await decideVariables(
      await input({ decision: v6, masterAddresses: ['2001:db8:60::20'] }),
    );
    expect(variables.set.NCCL_SOCKET_FAMILY).toBe('AF_INET6');
    expect(variables.warnings).toEqual([]);
  });

  it('sets NCCL_DEBUG and NCCL_DEBUG_SUBSYS only when asked, after the interface variables', async () => {
    expect((await decideVariables(await input())).set).not.toHaveProperty('NCCL_DEBUG');
    const asked = await decideVariables(
      await input({ ncclDebug: 'INFO', ncclDebugSubsys: 'INIT,NET' }),
    );
    expect(Object.entries(asked.set).slice(5)).toEqual([
      ['NCCL_DEBUG', 'INFO'],
      ['NCCL_DEBUG_SUBSYS', 'INIT,NET'],
    ]);
  });

  it("appends the job's PET_* fill from the cluster, last and in its order", async () => {
    const fill = {
      PET_MASTER_ADDR: 'node-0',
      PET_MASTER_PORT: '21387',
      PET_NNODES: '2',
      PET_NODE_RANK: '1',
    };
    const variables = await decideVariables(await input({ job: job({ fill, cluster: 'slurm' }) }));
    expect(Object.entries(variables.set)).toEqual([
      ...Object.entries(OURS),
      ...Object.entries(fill),
    ]);
  });

  it('keeps every variable the user already set and reports it with their value', async () => {
    const env = {
      NCCL_SOCKET_IFNAME: 'ens3',
      GLOO_SOCKET_IFNAME: 'ens3f0',
      TP_SOCKET_IFNAME: 'ens3f0',
      NCCL_SOCKET_FAMILY: 'AF_INET',
      PET_LOCAL_ADDR: 'trainer-0',
    };
    expect(await decideVariables(await input({ env }))).toEqual({
      set: {},
      kept: env,
      warnings: [],
    });
  });

  it('keeps a user value equal to its own, as kept, without a word', async () => {
    const variables = await decideVariables(
      await input({ env: { NCCL_SOCKET_IFNAME: '=ens3f0' } }),
    );
    expect(variables.kept).toEqual({ NCCL_SOCKET_IFNAME: '=ens3f0' });
    expect(variables.set).not.toHaveProperty('NCCL_SOCKET_IFNAME');
    expect(variables.warnings).toEqual([]);
  });

  it('with --force replaces the user value, keeps nothing and says what it replaced', async () => {
    const env = { NCCL_SOCKET_IFNAME: 'eth0', GLOO_SOCKET_IFNAME: 'ens3f0', NCCL_DEBUG: 'WARN' };
    const variables = await decideVariables(await input({ env, force: true, ncclDebug: 'INFO' }));
    expect(variables.set).toEqual({ ...OURS, NCCL_DEBUG: 'INFO' });
    expect(variables.kept).toEqual({});
    expect(variables.warnings).toEqual([
      "replacing your NCCL_SOCKET_IFNAME='eth0' with '=ens3f0' (--force)",
      "replacing your NCCL_DEBUG='WARN' with 'INFO' (--force)",
    ]);
  });

  it("with --force still keeps the user's PET_* value the job shape was read from", async () => {
    const variables = await decideVariables(
      await input({
        env: { PET_NNODES: '4' },
        force: true,
        job: job({ fill: { PET_NNODES: '2' } }),
      }),
    );
    expect(variables.kept).toEqual({ PET_NNODES: '4' });
    expect(variables.set).not.toHaveProperty('PET_NNODES');
  });

  describe('PET_LOCAL_ADDR (torchrun 2.x --local-addr)', () => {
    it('is the address NCCL binds on the chosen interface, also for IPv6', async () => {
      expect((await decideVariables(await input())).set.PET_LOCAL_ADDR).toBe('198.18.60.10');
      const v6 = decision({ address: '2001:db8:60::10', family: 'ipv6' });
      const variables = await decideVariables(
        await input({ decision: v6, masterAddresses: ['2001:db8:60::20'] }),
      );
      expect(variables.set.PET_LOCAL_ADDR).toBe('2001:db8:60::10');
    });

    it('keeps the user’s PET_LOCAL_ADDR, also under --force, and reports it as kept', async () => {
      const env = { PET_LOCAL_ADDR: 'trainer-0.data' };
      const localAddr = { value: 'trainer-0.data', origin: pet };
      for (const force of [false, true]) {
        const variables = await decideVariables(
          await input({ env, force, job: job({ localAddr }) }),
        );
        expect(variables.kept).toEqual(env);
        expect(variables.set).not.toHaveProperty('PET_LOCAL_ADDR');
        expect(variables.warnings).toEqual([]);
      }
    });

    it.each([
      ['--local-addr', '198.18.60.99'],
      ['--local_addr', ''],
    ])('is not exported when torchrun’s argv has %s, which wins over it', async (source, value) => {
      const variables = await decideVariables(
        await input({ job: job({ localAddr: { value, origin: { name: source, from: 'argv' } } }) }),
      );
      expect(variables.set).not.toHaveProperty('PET_LOCAL_ADDR');
      expect(variables.kept).toEqual({});
    });

    it('replaces an empty PET_LOCAL_ADDR, which torch takes as none, silently', async () => {
      const variables = await decideVariables(
        await input({
          env: { PET_LOCAL_ADDR: '' },
          job: job({ localAddr: { value: '', origin: pet } }),
        }),
      );
      expect(variables.set.PET_LOCAL_ADDR).toBe('198.18.60.10');
      expect(variables.warnings).toEqual([]);
    });
  });

  it('counts an empty NCCL_SOCKET_IFNAME as unset, silently', async () => {
    const variables = await decideVariables(await input({ env: { NCCL_SOCKET_IFNAME: '' } }));
    expect(variables.set.NCCL_SOCKET_IFNAME).toBe('=ens3f0');
    expect(variables.warnings).toEqual([]);
  });

  it.each([
    ['NCCL_SOCKET_IFNAME', 'NCCL', '=ens3f0'],
    ['GLOO_SOCKET_IFNAME', 'Gloo', 'ens3f0'],
  ])('replaces a one-character %s, which %s ignores, and says so', async (name, consumer, ours) => {
    const variables = await decideVariables(await input({ env: { [name]: 'e' } }));
    expect(variables.set[name]).toBe(ours);
    expect(variables.kept).toEqual({});
    expect(variables.warnings).toEqual([
      `${name}='e' is shorter than 2 characters, which ${consumer} ignores; setting ${name}='${ours}'`,
    ]);
  });

  it('says when a kept NCCL_DEBUG overrides --nccl-debug, and not when they agree', async () => {
    const differ = await decideVariables(
      await input({ env: { NCCL_DEBUG: 'WARN' }, ncclDebug: 'INFO' }),
    );
    expect(differ.kept).toEqual({ NCCL_DEBUG: 'WARN' });
    expect(differ.warnings).toEqual([
      "NCCL_DEBUG='WARN' is already set, so --nccl-debug INFO does not apply; --force replaces it",
    ]);
    const agree = await decideVariables(
      await input({ env: { NCCL_DEBUG: 'INFO' }, ncclDebug: 'INFO' }),
    );
    expect(agree.warnings).toEqual([]);
  });
});

describe('decideVariables: warnings about the user’s interface variables', () => {
  it.each(['eth1', '=ens3', '^ens', '^=ens3f0,lo', 'ens', '=ens3f0'])(
    'leaves NCCL_SOCKET_IFNAME=%j to the warnings about what NCCL binds under it (plan)',
    async (value) => {
      const { warnings } = await decideVariables(
        await input({ env: { NCCL_SOCKET_IFNAME: value } }),
      );
      expect(warnings).toEqual([]);
    },
  );

  it('names the route to the master when it leaves through another interface than the chosen one', async () => {
    // --iface eno1 chose the management port, but the master is on ens3f0's network.
    const explicit = decision({ interface: 'eno1', address: '203.0.113.10', strategy: 'explicit' });
    const { warnings } = await decideVariables(
      await input({
        decision: explicit,
        env: { NCCL_SOCKET_IFNAME: '=eno1', TP_SOCKET_IFNAME: 'eno1' },
      }),
    );
    expect(warnings).toEqual([
      `TP_SOCKET_IFNAME='eno1' (yours, kept) does not cover ens3f0, the interface the master ${MASTER} is reached through`,
    ]);
  });

  it('does not hold a user variable to a route when the master is this host (a local route)', async () => {
    const { warnings } = await decideVariables(
      await input({
        masterAddresses: ['198.18.60.10'],
        routesToMaster: await routeTo(['198.18.60.10'], facts, false),
        env: { GLOO_SOCKET_IFNAME: 'ens3f0' },
      }),
    );
    expect(warnings).toEqual([]);
  });

  it.each([
    ['in NCCL syntax', '^docker,lo', "uses NCCL's ^/= syntax (^docker)"],
    ['naming an interface this host lacks', 'eth9', 'names eth9, which this host does not have'],
  ])(
    'refuses a kept Gloo value %s with a ConfigError (exit 78) naming where it was set',
    async (_case, value, why) => {
      const given = await input({ env: { GLOO_SOCKET_IFNAME: value } });
      const attempt = () => decideVariables(given);
      expect(attempt).toThrow(ConfigError);
      expect(attempt).toThrow(`GLOO_SOCKET_IFNAME='${value}' (set in the environment) ${why}`);
    },
  );

  it('replaces a Gloo value Gloo would reject when --force is given', async () => {
    const variables = await decideVariables(
      await input({ env: { GLOO_SOCKET_IFNAME: '^docker,lo' }, force: true }),
    );
    expect(variables.set.GLOO_SOCKET_IFNAME).toBe('ens3f0');
  });

  it('warns about a Gloo list of another length than the NCCL list the job runs with', async () => {
    const { warnings } = await decideVariables(
      await input({ env: { NCCL_SOCKET_IFNAME: 'ens3f0', GLOO_SOCKET_IFNAME: 'ens3f0,eno1' } }),
    );
    expect(warnings).toEqual([
      "GLOO_SOCKET_IFNAME='ens3f0,eno1' (set in the environment) lists 2 interfaces but NCCL_SOCKET_IFNAME='ens3f0' lists 1; Gloo and NCCL will not use the same interfaces",
    ]);
  });

  it('refuses a Gloo address with a ConfigError (exit 78) naming the variable, value and a valid one', async () => {
    const given = await input({ env: { GLOO_SOCKET_IFNAME: '198.18.60.10' } });
    const attempt = () => decideVariables(given);
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(
      "GLOO_SOCKET_IFNAME='198.18.60.10' (set in the environment) holds the address 198.18.60.10; it takes interface names only (comma-separated, no ^ or =): use GLOO_SOCKET_IFNAME=ens3f0, or --force to let nccl-run replace it",
    );
  });

  it('does not refuse a Gloo address that --force replaces', async () => {
    const variables = await decideVariables(
      await input({ env: { GLOO_SOCKET_IFNAME: '198.18.60.10' }, force: true }),
    );
    expect(variables.set.GLOO_SOCKET_IFNAME).toBe('ens3f0');
  });

  it.each([
    [
      'AF_INET6',
      'NCCL_SOCKET_FAMILY=AF_INET6 (yours, kept) but the chosen ens3f0 198.18.60.10 is IPv4; NCCL will look for an IPv6 address; --force sets AF_INET',
    ],
    [
      'ipv4',
      "NCCL_SOCKET_FAMILY='ipv4' (yours, kept) is neither AF_INET nor AF_INET6, so NCCL ignores it; the chosen ens3f0 198.18.60.10 wants AF_INET",
    ],
  ])(
    'warns about a kept NCCL_SOCKET_FAMILY=%s that NCCL would not use as chosen',
    async (value, expected) => {
      const { warnings } = await decideVariables(
        await input({ env: { NCCL_SOCKET_FAMILY: value } }),
      );
      expect(warnings).toEqual([expected]);
    },
  );
});

describe('decideVariables: warnings about the host and the job', () => {
  it('warns about a faster usable interface when the master address made the choice', async () => {
    const mgmt = '203.0.113.20';
    const viaMgmt = decision({ interface: 'eno1', address: '203.0.113.10', strategy: 'route' });
    const { warnings } = await decideVariables(
      await input({
        decision: viaMgmt,
        masterAddresses: [mgmt],
        job: job({
          master: { host: mgmt, port: 29500, ...endpointOrigins('MASTER_ADDR') },
          masterAddr: mgmt,
        }),
      }),
    );
    expect(warnings).toEqual([
      `ens3f0 (100000 Mb/s, 198.18.60.10) is faster than the chosen eno1 (1000 Mb/s), which route picked for the master ${mgmt}; if the master has an address on ens3f0's network, make that the master address, or pass --iface ens3f0`,
    ]);
  });

  it('tells a pod its secondary network is faster than the pod network (multus)', async () => {
    const pod = loadFacts('multus-pod');
    const master = '10.244.5.30';
    const { warnings } = await decideVariables(
      await input({
        facts: pod,
        decision: decision({ interface: 'eth0', address: '10.244.5.17', strategy: 'subnet' }),
        masterAddresses: [master],
        job: job({
          master: { host: master, port: 29500, ...endpointOrigins('PET_MASTER_ADDR') },
          masterAddr: master,
        }),
      }),
    );
    expect(warnings).toEqual([
      expect.stringMatching(
        /^net1 \(100000 Mb\/s, 198\.18\.40\.17\) is faster than the chosen eth0 \(10000 Mb\/s\)/,
      ),
    ]);
  });

  it.each([
    ['the user chose it (explicit)', { strategy: 'explicit' as const }, []],
    ['the speed ranking chose it', { strategy: 'speed' as const }, []],
    ['the faster one is excluded', { strategy: 'route' as const }, ['=ens3f0']],
  ])('says nothing about a faster interface when %s', async (_, over, extraExcludes) => {
    const chosen = decision({ interface: 'eno1', address: '203.0.113.10', ...over });
    const { warnings } = await decideVariables(
      await input({
        decision: chosen,
        masterAddresses: ['203.0.113.20'],
        job: job({
          master: { host: '203.0.113.20', port: 29500, ...endpointOrigins('MASTER_ADDR') },
          masterAddr: '203.0.113.20',
        }),
        excludes: buildExcludes(extraExcludes, false),
      }),
    );
    expect(warnings).toEqual([]);
  });

  it('says nothing about speed when the chosen link speed is unknown', async () => {
    const bond = loadFacts('bond-host'); // ens2f0: speed unknown; bond0: 50000 Mb/s
    const { warnings } = await decideVariables(
      await input({
        facts: bond,
        decision: decision({ interface: 'ens2f0', address: '198.18.12.42', strategy: 'subnet' }),
        masterAddresses: ['198.18.12.1'],
        job: job({
          master: { host: '198.18.12.1', port: 29500, ...endpointOrigins('MASTER_ADDR') },
          masterAddr: '198.18.12.1',
        }),
      }),
    );
    expect(warnings).toEqual([]);
  });

  it('warns when --master-addr is on another network than the c10d rendezvous endpoint', async () => {
    const c10d = job({
      rdzvBackend: 'c10d',
      master: { host: MASTER, port: 29400, ...endpointOrigins('argv --rdzv-endpoint') },
      masterAddr: '203.0.113.20',
    });
    const { warnings } = await decideVariables(await input({ job: c10d }));
    expect(warnings).toEqual([
      `master address 203.0.113.20 is reached via eno1, but the c10d rendezvous endpoint ${MASTER} via ens3f0: different networks; torchrun meets at the endpoint, so the job uses ens3f0`,
    ]);
  });

  it('says nothing when --master-addr is on the rendezvous endpoint’s network', async () => {
    const c10d = job({
      rdzvBackend: 'c10d',
      master: { host: MASTER, port: 29400, ...endpointOrigins('argv --rdzv-endpoint') },
      masterAddr: '198.18.60.21',
    });
    expect((await decideVariables(await input({ job: c10d }))).warnings).toEqual([]);
  });
});
