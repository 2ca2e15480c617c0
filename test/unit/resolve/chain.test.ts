import { describe, expect, it } from 'vitest';
import { NoInterfaceError } from '../../../src/errors.js';
import type { HostFacts } from '../../../src/host/host-facts.js';
import { chain, type Link } from '../../../src/resolve/chain.js';
import type { ResolveContext, Strategy, StrategyName } from '../../../src/resolve/decision.js';
import { runChain } from '../../../src/resolve/run-chain.js';
import { loadFacts, makeContext } from '../../fixtures/facts/facts-fixtures.js';

/** Strategies that answer fixed outcomes and log that they ran: the runner is tested apart from networks. */
function links(ran: string[], outcomes: [StrategyName, ReturnType<Strategy>][]): Link[] {
  return outcomes.map(([name, outcome]) => [
    name,
    () => {
      ran.push(name);
      return outcome;
    },
  ]);
}

const facts: HostFacts = { hostname: 'h', interfaces: [], routes: [] };
const context = makeContext();

describe('chain', () => {
  it('runs in the given order and traces each skip', () => {
    const ran: string[] = [];
    const result = chain(
      links(ran, [
        ['speed', { outcome: 'skipped', reason: 's1' }],
        ['explicit', { outcome: 'skipped', reason: 's2' }],
        ['route', { outcome: 'picked', interface: 'eth0', address: '198.18.0.1', reason: 'p' }],
      ]),
      facts,
      context,
    );
    expect(ran).toEqual(['speed', 'explicit', 'route']);
    expect(result).toEqual({
      picked: { outcome: 'picked', interface: 'eth0', address: '198.18.0.1', reason: 'p' },
      by: 'route',
      trace: [
        { strategy: 'speed', outcome: 'skipped', reason: 's1' },
        { strategy: 'explicit', outcome: 'skipped', reason: 's2' },
        { strategy: 'route', outcome: 'picked', reason: 'p' },
      ],
    });
  });

  it('stops at the first pick: later strategies neither run nor appear', () => {
    const ran: string[] = [];
    const result = chain(
      links(ran, [
        ['explicit', { outcome: 'picked', interface: 'ib0', address: '198.18.32.17', reason: 'p' }],
        ['local', { outcome: 'picked', interface: 'lo', address: '127.0.0.1', reason: 'never' }],
        ['speed', { outcome: 'fatal', reason: 'never' }],
      ]),
      facts,
      context,
    );
    expect(ran).toEqual(['explicit']);
    expect(result.trace).toEqual([{ strategy: 'explicit', outcome: 'picked', reason: 'p' }]);
  });

  it('stops at a fatal outcome and reports it', () => {
    const ran: string[] = [];
    const result = chain(
      links(ran, [
        ['explicit', { outcome: 'fatal', reason: 'ens9 does not exist' }],
        ['speed', { outcome: 'picked', interface: 'eth0', address: '198.18.0.1', reason: 'never' }],
      ]),
      facts,
      context,
    );
    expect(ran).toEqual(['explicit']);
    expect(result).toEqual({
      picked: null,
      fatal: { strategy: 'explicit', outcome: 'fatal', reason: 'ens9 does not exist' },
      trace: [{ strategy: 'explicit', outcome: 'fatal', reason: 'ens9 does not exist' }],
    });
  });

  it('reports nothing picked when every strategy skips', () => {
    const ran: string[] = [];
    const result = chain(
      links(ran, [
        ['subnet', { outcome: 'skipped', reason: 'a' }],
        ['route', { outcome: 'skipped', reason: 'b' }],
      ]),
      facts,
      context,
    );
    expect(result).toMatchObject({ picked: null, fatal: null });
    expect(result.trace.map((e) => e.strategy)).toEqual(['subnet', 'route']);
  });

  it('runs nothing for an empty chain', () => {
    expect(chain([], facts, context)).toEqual({ picked: null, fatal: null, trace: [] });
  });

  it('hands every strategy the same facts and context', () => {
    const seen: [HostFacts, ResolveContext][] = [];
    const spy: Strategy = (f, c) => {
      seen.push([f, c]);
      return { outcome: 'skipped', reason: 'x' };
    };
    chain(
      [
        ['subnet', spy],
        ['route', spy],
      ],
      facts,
      context,
    );
    expect(seen).toHaveLength(2);
    for (const [f, c] of seen) {
      expect(f).toBe(facts);
      expect(c).toBe(context);
    }
  });
});

describe('runChain', () => {
  it('turns a pick into a decision carrying strategy, family and trace', () => {
    const decision = runChain(
      ['explicit', 'speed'],
      loadFacts('ipv6-only'),
      makeContext({ family: 'ipv6' }),
    );
    expect(decision).toEqual({
      interface: 'ens3',
      address: '2001:db8:0:12::3',
      family: 'ipv6',
      strategy: 'speed',
      reason: 'fastest usable: ens3 (25000 Mb/s, physical); the only usable one',
      trace: [
        {
          strategy: 'explicit',
          outcome: 'skipped',
          reason: 'no --iface given and no NCCL_SOCKET_IFNAME to keep',
        },
        {
          strategy: 'speed',
          outcome: 'picked',
          reason: 'fastest usable: ens3 (25000 Mb/s, physical); the only usable one',
        },
      ],
    });
  });

  it('runs only the strategies named, in their order', () => {
    const decision = runChain(
      ['speed', 'local'],
      loadFacts('infiniband-node'),
      makeContext({ singleNode: true }),
    );
    expect(decision.strategy).toBe('speed');
    expect(decision.trace.map((e) => e.strategy)).toEqual(['speed']);
  });

  it('throws NoInterfaceError (exit 69) for an empty chain', () => {
    const error = catchError(() => runChain([], loadFacts('docker-host'), makeContext()));
    expect(error).toBeInstanceOf(NoInterfaceError);
    expect(error.exitCode).toBe(69);
    expect(error.message).toBe('no interface chosen: the strategy list is empty');
    expect(error.details.slice(-2)).toEqual(['trace:', '  (no strategy ran)']);
  });

  it('throws with the fatal reason as the message and stops there', () => {
    const error = catchError(() =>
      runChain(
        ['explicit', 'speed'],
        loadFacts('docker-host'),
        makeContext({ explicitInterfaces: ['ens9'] }),
      ),
    );
    expect(error.message).toBe('--iface ens9 is not usable (ens9: does not exist)');
    expect(error.details.filter((line) => line.startsWith('  speed'))).toEqual([]);
    expect(error.details.at(-1)).toBe(
      '  explicit  fatal    --iface ens9 is not usable (ens9: does not exist)',
    );
  });
});

function catchError(run: () => unknown): NoInterfaceError {
  try {
    run();
  } catch (error) {
    if (error instanceof NoInterfaceError) return error;
    throw error;
  }
  throw new Error('expected NoInterfaceError, nothing was thrown');
}
