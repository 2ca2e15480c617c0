/**
 * The decision's address is the one NCCL binds on the chosen interface
 * (SPEC "NCCL's own pick"), whatever address the strategy went by; on lo an
 * IPv6 job's NCCL sockets run on IPv4 (SPEC "What it exports").
 */
import { describe, expect, it } from 'vitest';
import { runChain } from '../../src/resolve/run-chain.js';
import { DEFAULT_CHAIN } from '../../src/resolve/strategies/index.js';
import { loadFacts, makeContext } from '../fixtures/facts/facts-fixtures.js';

const master = (...addresses: string[]) => ({ master: { host: 'master', addresses } });

describe('the decision binds what NCCL binds', () => {
  it("subnet matched eth1's second IPv4 address: NCCL binds the first", () => {
    const decision = runChain(
      DEFAULT_CHAIN,
      loadFacts('lab-multi-address'),
      makeContext(master('198.18.8.1')),
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
      makeContext({ ...master('2001:db8:8::1'), family: 'ipv6' }),
    );
    expect(decision).toMatchObject({ interface: 'eth1', address: '2001:db8:9::5', family: 'ipv6' });
  });

  it('a single-node IPv6 job: lo 127.0.0.1, family ipv4', () => {
    const decision = runChain(
      DEFAULT_CHAIN,
      loadFacts('lab-single-node'),
      makeContext({ ...master('::1'), family: 'ipv6', singleNode: true }),
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
      makeContext(master('198.18.2.1')),
    );
    expect(decision).toMatchObject({ interface: 'eth1', address: '198.18.2.5' });
    expect(decision.reason).toBe('198.18.2.0/24 on eth1 contains master 198.18.2.1');
  });
});
