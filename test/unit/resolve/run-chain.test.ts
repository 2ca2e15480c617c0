/**
 * The default chain end to end over facts of real-looking machines: which
 * interface each one gets, by which strategy, and what the trace says.
 */
import { describe, expect, it } from 'vitest';
import type { RouteAnswer } from '../../../src/host/host-facts.js';
import type { ResolveContext, StrategyName, TraceEntry } from '../../../src/resolve/decision.js';
import { buildExcludes } from '../../../src/resolve/excludes.js';
import { ChainFailedError, decidedBefore, runChain } from '../../../src/resolve/run-chain.js';
import { DEFAULT_CHAIN } from '../../../src/resolve/strategies/index.js';
import {
  FIXTURES,
  type FixtureName,
  loadFacts,
  makeContext,
} from '../../fixtures/facts/facts-fixtures.js';

const via = (
  destination: string,
  iface: string,
  source: string | null,
  gateway: string | null = null,
): RouteAnswer => ({
  destination,
  interface: iface,
  source,
  gateway,
  type: 'unicast',
});
const master = (
  host: string,
  addresses: string[],
  routesToMaster: RouteAnswer[] = [],
): Partial<ResolveContext> => ({
  master: { host, addresses },
  routesToMaster,
});
const outcomes = (trace: TraceEntry[]) => trace.map((e) => `${e.strategy}:${e.outcome}`).join(' ');

describe('every facts fixture follows HostFacts', () => {
  it.each(FIXTURES)('%s', (name) => {
    const facts = loadFacts(name);
    expect(facts.interfaces.length).toBeGreaterThan(1);
    expect(new Set(facts.interfaces.map((i) => i.name)).size).toBe(facts.interfaces.length);
  });

  it('the k8s fixtures are as large as their names say', () => {
    expect(loadFacts('k8s-node').interfaces.filter((i) => i.kind === 'veth')).toHaveLength(500);
    expect(loadFacts('k8s-node-1000').interfaces).toHaveLength(1000);
  });
});

describe('the default chain', () => {
  it.each<[string, FixtureName, Partial<ResolveContext>, string, string, StrategyName, string]>([
    [
      'Docker host, master on the LAN',
      'docker-host',
      master('gpu-dev-00', ['198.18.4.10'], [via('198.18.4.10', 'eno1', '198.18.4.21')]),
      'eno1',
      '198.18.4.21',
      'subnet',
      'explicit:skipped local:skipped multus:skipped subnet:picked',
    ],
    [
      'Docker host, nothing known',
      'docker-host',
      {},
      'eno1',
      '198.18.4.21',
      'speed',
      'explicit:skipped local:skipped multus:skipped subnet:skipped route:skipped speed:picked',
    ],
    [
      'InfiniBand node, master on the fabric',
      'infiniband-node',
      master('dgx-a100-001', ['198.18.32.1'], [via('198.18.32.1', 'ib0', '198.18.32.17')]),
      'ib0',
      '198.18.32.17',
      'subnet',
      'explicit:skipped local:skipped multus:skipped subnet:picked',
    ],
    [
      'InfiniBand node, single-node job',
      'infiniband-node',
      { singleNode: true },
      'lo',
      '127.0.0.1',
      'local',
      'explicit:skipped local:picked',
    ],
    [
      'InfiniBand node, master routed through management',
      'infiniband-node',
      master(
        'scheduler',
        ['198.19.5.5'],
        [via('198.19.5.5', 'eth0', '203.0.113.17', '203.0.113.1')],
      ),
      'eth0',
      '203.0.113.17',
      'route',
      'explicit:skipped local:skipped multus:skipped subnet:skipped route:picked',
    ],
    [
      // bond0 also matches bond0.2973, the master's network: Gloo gets that one (NCCL binds bond0).
      'bond host, the user set NCCL_SOCKET_IFNAME=bond0',
      'bond-host',
      { ...master('trn-node-01', ['198.18.16.1']), userNcclIfname: 'bond0' },
      'bond0.2973',
      '198.18.16.42',
      'explicit',
      'explicit:picked',
    ],
    [
      'Kubernetes node with 500 veth, master a peer node',
      'k8s-node',
      master('k8s-gpu-worker-0', ['198.18.20.10'], [via('198.18.20.10', 'ens5', '198.18.20.13')]),
      'ens5',
      '198.18.20.13',
      'subnet',
      'explicit:skipped local:skipped multus:skipped subnet:picked',
    ],
    [
      'Kubernetes node with 1,000 interfaces, nothing known',
      'k8s-node-1000',
      {},
      'ens5',
      '198.18.20.13',
      'speed',
      'explicit:skipped local:skipped multus:skipped subnet:skipped route:skipped speed:picked',
    ],
    [
      'Multus pod, master pod on another node',
      'multus-pod',
      master(
        'pytorchjob-llm-master-0',
        ['10.244.1.5'],
        [via('10.244.1.5', 'eth0', '10.244.5.17', '10.244.5.1')],
      ),
      'eth0',
      '10.244.5.17',
      'route',
      'explicit:skipped local:skipped multus:skipped subnet:skipped route:picked',
    ],
    [
      'Multus pod, master pod on another node, with its network-status: net1, not the pod network',
      'multus-pod',
      {
        ...master(
          'pytorchjob-llm-master-0',
          ['10.244.1.5'],
          [via('10.244.1.5', 'eth0', '10.244.5.17', '10.244.5.1')],
        ),
        networkStatus: {
          file: '/etc/podinfo/annotations',
          kind: 'attached',
          networks: [
            { name: 'k8s-pod-network', interface: 'eth0', ips: ['10.244.5.17'], default: true },
            { name: 'default/roce', interface: 'net1', ips: ['198.18.40.17'], default: false },
          ],
        },
      },
      'net1',
      '198.18.40.17',
      'multus',
      'explicit:skipped local:skipped multus:picked',
    ],
    [
      'Multus pod, no master known: the RoCE VF',
      'multus-pod',
      {},
      'net1',
      '198.18.40.17',
      'speed',
      'explicit:skipped local:skipped multus:skipped subnet:skipped route:skipped speed:picked',
    ],
    [
      'IPv6-only node',
      'ipv6-only',
      { ...master('v6-node-1', ['2001:db8:0:12::1']), family: 'ipv6' },
      'ens3',
      '2001:db8:0:12::3',
      'subnet',
      'explicit:skipped local:skipped multus:skipped subnet:picked',
    ],
    // SPEC "Causes users meet": a VPN the master is reached through is the job's network.
    [
      'tailscale host, the master on the tailnet: its default exclude gives way, the route wins',
      'tailscale-host',
      master('ws-lab-1', ['100.90.1.2'], [via('100.90.1.2', 'tailscale0', '100.101.102.103')]),
      'tailscale0',
      '100.101.102.103',
      'route',
      'explicit:skipped local:skipped multus:skipped subnet:skipped route:picked',
    ],
    [
      'tailscale host without default excludes: the route wins',
      'tailscale-host',
      {
        ...master('ws-lab-1', ['100.90.1.2'], [via('100.90.1.2', 'tailscale0', '100.101.102.103')]),
        excludes: buildExcludes([], true),
      },
      'tailscale0',
      '100.101.102.103',
      'route',
      'explicit:skipped local:skipped multus:skipped subnet:skipped route:picked',
    ],
    [
      'master node, MASTER_ADDR its own address',
      'master-node',
      master(
        'node-0',
        ['198.18.60.10'],
        [
          {
            destination: '198.18.60.10',
            interface: 'lo',
            source: '198.18.60.10',
            gateway: null,
            type: 'local',
          },
        ],
      ),
      'ens3f0',
      '198.18.60.10',
      'subnet',
      'explicit:skipped local:skipped multus:skipped subnet:picked',
    ],
    [
      'hostname on 127.0.1.1, two nodes',
      'hostname-loopback',
      master(
        'gpu-box',
        ['127.0.1.1'],
        [
          {
            destination: '127.0.1.1',
            interface: 'lo',
            source: '127.0.0.1',
            gateway: null,
            type: 'local',
          },
        ],
      ),
      'enp6s0',
      '198.18.70.4',
      'speed',
      'explicit:skipped local:skipped multus:skipped subnet:skipped route:skipped speed:picked',
    ],
  ])('%s → %s', (_, fixture, context, iface, address, strategy, trace) => {
    const decision = runChain(DEFAULT_CHAIN, loadFacts(fixture), makeContext(context));
    expect(decision).toMatchObject({
      interface: iface,
      address,
      strategy,
      family: context.family ?? 'ipv4',
    });
    expect(outcomes(decision.trace)).toBe(trace);
    expect(decision.reason).toBe(decision.trace.at(-1)?.reason);
  });
});

describe('when no interface can be chosen', () => {
  function failure(
    fixture: FixtureName,
    context: Partial<ResolveContext>,
    names = DEFAULT_CHAIN,
  ): ChainFailedError {
    try {
      runChain(names, loadFacts(fixture), makeContext(context));
    } catch (error) {
      if (error instanceof ChainFailedError) return error;
      throw error;
    }
    throw new Error('expected ChainFailedError');
  }

  it('prints the interface table and the trace for a link-local-only host', () => {
    const error = failure('link-local-only', {});
    expect(error.exitCode).toBe(69);
    expect(error.message).toBe(
      'no usable interface: none of the strategies explicit, local, multus, subnet, route, speed picked one (interfaces and trace below)',
    );
    expect(error.details).toEqual([
      'interfaces:',
      '  NAME  STATE    ADDRESSES                                    SPEED  KIND      VERDICT',
      '  lo    unknown  127.0.0.1/8 ::1/128                          -      loopback  loopback',
      '  eth0  up       169.254.33.7/16 fe80::2e0:4cff:fe68:1a07/64  1G     physical  link-local only',
      '  eth1  up       fe80::2e0:4cff:fe68:1a08/64                  1G     physical  no IPv4 address',
      'trace:',
      '  explicit  skipped  no --iface given and no NCCL_SOCKET_IFNAME to keep',
      '  local     skipped  the job is not single-node (not --standalone, and more than one node or a master on another host)',
      '  multus    skipped  no --network-status file',
      '  subnet    skipped  no master address known',
      '  route     skipped  no master address known',
      '  speed     skipped  no usable IPv4 interface (1 loopback, 1 link-local only, 1 no IPv4 address)',
    ]);
  });

  it('fails an IPv4 job on an IPv6-only node', () => {
    const error = failure('ipv6-only', {});
    expect(error.details).toContain(
      '  speed     skipped  no usable IPv4 interface (1 loopback, 1 no IPv4 address)',
    );
  });

  it('folds hundreds of excluded veth into one line', () => {
    const error = failure('k8s-node', { excludes: buildExcludes(['=ens5'], false) }, [
      'subnet',
      'speed',
    ]);
    expect(error.details).toContain('  ... and 497 more excluded (prefix veth)');
    expect(error.details.length).toBeLessThan(20);
    expect(error.message).not.toContain('\n');
  });

  // SPEC: the interface that reaches the master but must be rejected is
  // fatal, never a fall-through to speed, which picks another network and
  // times out a minute later.
  it.each([
    [
      'the master is behind the dead 100G port',
      'bond-host' as const,
      master('trn-node-01', ['198.18.12.1'], [via('198.18.12.1', 'ens2f0', '198.18.12.42')]),
      'subnet',
      '198.18.12.0/22 on ens2f0 contains master 198.18.12.1, but ens2f0 is down (no carrier); name the interface to use with --iface, or change --exclude',
    ],
    // A VPN the user excludes by name stays excluded (SPEC "Causes users meet").
    [
      'the master is on the tailnet, and the user excluded tailscale',
      'tailscale-host' as const,
      {
        ...master('ws-lab-1', ['100.90.1.2'], [via('100.90.1.2', 'tailscale0', '100.101.102.103')]),
        excludes: buildExcludes(['tailscale'], false),
      },
      'route',
      'route to 100.90.1.2 leaves via tailscale0, which is excluded (prefix tailscale); name the interface to use with --iface, or change --exclude',
    ],
  ])('stops when %s, naming the interface and why', (_case, fixture, context, strategy, reason) => {
    const error = failure(fixture, context);
    expect(error.message).toBe(reason);
    expect(error.trace.at(-1)).toEqual({ strategy, outcome: 'fatal', reason });
  });

  it('stops at an explicit interface that is down, naming it', () => {
    const error = failure('bond-host', { explicitInterfaces: ['ens2f0'] });
    expect(error.message).toBe('--iface ens2f0 is not usable (ens2f0: down (no carrier))');
    expect(error.details).toContain(
      '  ens2f0      down     198.18.12.42/22                              -      physical     down (no carrier)',
    );
    expect(error.details.slice(-2)).toEqual([
      'trace:',
      '  explicit  fatal    --iface ens2f0 is not usable (ens2f0: down (no carrier))',
    ]);
  });
});

/**
 * The decision's address is the one NCCL binds on the chosen interface
 * (SPEC "NCCL's own pick"), whatever address the strategy went by; on lo an
 * IPv6 job's NCCL sockets run on IPv4 (SPEC "What it exports").
 */
const masterAt = (...addresses: string[]) => ({ master: { host: 'master', addresses } });

describe('the decision binds what NCCL binds', () => {
  it("subnet matched eth1's second IPv4 address: NCCL binds the first", () => {
    const decision = runChain(
      DEFAULT_CHAIN,
      loadFacts('lab-multi-address'),
      makeContext(masterAt('198.18.8.1')),
    );
    expect(decision).toMatchObject({
      interface: 'eth1',
      address: '198.18.9.5',
      family: 'ipv4',
      strategy: 'subnet',
    });
    expect(decision.reason).toBe(
      '198.18.8.0/24 on eth1 contains master 198.18.8.1; NCCL binds 198.18.9.5, the first IPv4 address of eth1, not 198.18.8.5',
    );
  });

  it('IPv6: the newest address of the scope', () => {
    const decision = runChain(
      DEFAULT_CHAIN,
      loadFacts('lab-multi-address'),
      makeContext({ ...masterAt('2001:db8:8::1'), family: 'ipv6' }),
    );
    expect(decision).toMatchObject({ interface: 'eth1', address: '2001:db8:9::5', family: 'ipv6' });
  });

  it('a single-node IPv6 job: lo 127.0.0.1, family ipv4', () => {
    const decision = runChain(
      DEFAULT_CHAIN,
      loadFacts('lab-single-node'),
      makeContext({ ...masterAt('::1'), family: 'ipv6', singleNode: true }),
    );
    expect(decision).toMatchObject({
      interface: 'lo',
      address: '127.0.0.1',
      family: 'ipv4',
      strategy: 'local',
    });
    expect(decision.reason).toMatch(
      /; NCCL skips ::1, so its sockets on lo use IPv4 127\.0\.0\.1$/,
    );
  });

  it('--iface lo for an IPv6 job: the same', () => {
    const decision = runChain(
      DEFAULT_CHAIN,
      loadFacts('lab-single-node'),
      makeContext({ explicitInterfaces: ['lo'], family: 'ipv6' }),
    );
    expect(decision).toMatchObject({ interface: 'lo', address: '127.0.0.1', family: 'ipv4' });
  });

  it('a single address: no note', () => {
    const decision = runChain(
      DEFAULT_CHAIN,
      loadFacts('lab-mgmt-first'),
      makeContext(masterAt('198.18.2.1')),
    );
    expect(decision).toMatchObject({ interface: 'eth1', address: '198.18.2.5' });
    expect(decision.reason).toBe('198.18.2.0/24 on eth1 contains master 198.18.2.1');
  });
});

/** What a strategy needs read (multus: --network-status) is read only where the strategies before it leave the choice open. */
describe('decidedBefore', () => {
  const facts = loadFacts('docker-host');
  const onLan = master('gpu-dev-00', ['198.18.4.10'], [via('198.18.4.10', 'eno1', '198.18.4.21')]);
  it.each<[string, Partial<ResolveContext>, readonly StrategyName[], boolean]>([
    ['nothing said, a multi-node job', onLan, DEFAULT_CHAIN, false],
    ['--iface eno1', { ...onLan, explicitInterfaces: ['eno1'] }, DEFAULT_CHAIN, true],
    ['a kept NCCL_SOCKET_IFNAME', { ...onLan, userNcclIfname: 'eno1' }, DEFAULT_CHAIN, true],
    [
      '--iface naming a missing interface (the chain stops)',
      { explicitInterfaces: ['nope'] },
      DEFAULT_CHAIN,
      true,
    ],
    ['a single-node job', { singleNode: true }, DEFAULT_CHAIN, true],
    ['subnet placed before multus', onLan, ['explicit', 'subnet', 'multus'], true],
    ['multus first', { explicitInterfaces: ['eno1'] }, ['multus', 'explicit'], false],
    ['multus not in the chain: every strategy ran', onLan, ['explicit', 'local', 'speed'], true],
  ])('%s: %s', (_case, context, names, decided) => {
    expect(decidedBefore('multus', names, facts, makeContext(context))).toBe(decided);
  });
});
