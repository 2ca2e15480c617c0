import { describe, expect, it } from 'vitest';
import type { ResolveContext } from '../../../src/resolve/decision.js';
import { buildExcludes } from '../../../src/resolve/excludes.js';
import { interfaceVerdicts, verdictText } from '../../../src/resolve/interface-table.js';
import { runChain } from '../../../src/resolve/run-chain.js';
import { DEFAULT_CHAIN } from '../../../src/resolve/strategies/index.js';
import { type FixtureName, loadFacts, makeContext } from '../../fixtures/facts/facts-fixtures.js';

function verdicts(fixture: FixtureName, overrides: Partial<ResolveContext> = {}, decide = true) {
  const facts = loadFacts(fixture);
  const context = makeContext(overrides);
  const decision = decide ? runChain(DEFAULT_CHAIN, facts, context) : null;
  return Object.fromEntries(
    [...interfaceVerdicts(facts, context, decision)].map(([name, verdict]) => [
      name,
      verdictText(verdict),
    ]),
  );
}

describe('interfaceVerdicts', () => {
  it('Docker host', () => {
    expect(verdicts('docker-host')).toEqual({
      lo: 'loopback',
      eno1: 'chosen',
      eno2: 'down',
      docker0: 'excluded (prefix docker)',
      'br-3f9a1c2e7b44': 'excluded (prefix br-)',
      veth1a2b3c4: 'excluded (prefix veth)',
      veth9f8e7d6: 'excluded (prefix veth)',
    });
  });

  it('Docker host without default excludes', () => {
    expect(verdicts('docker-host', { excludes: buildExcludes([], true) })).toMatchObject({
      docker0: 'usable',
      veth1a2b3c4: 'no IPv4 address',
    });
  });

  it('bond host', () => {
    expect(verdicts('bond-host')).toEqual({
      lo: 'loopback',
      eno1: 'usable',
      ens1f0: 'bond member of bond0',
      ens1f1: 'bond member of bond0',
      ens2f0: 'down (no carrier)',
      bond0: 'chosen',
      'bond0.2973': 'usable',
    });
  });

  it('single-node: lo is chosen though the default excludes name it', () => {
    expect(verdicts('infiniband-node', { singleNode: true })).toEqual({
      lo: 'chosen',
      eth0: 'usable',
      ib0: 'usable',
      ib1: 'down (no carrier)',
      docker0: 'excluded (prefix docker)',
    });
  });

  it('an explicit choice of an excluded interface is still chosen', () => {
    expect(verdicts('docker-host', { explicitInterfaces: ['docker0'] })).toMatchObject({
      docker0: 'chosen',
      eno1: 'usable',
    });
  });

  it('without a decision nothing is chosen', () => {
    expect(verdicts('link-local-only', {}, false)).toEqual({
      lo: 'loopback',
      eth0: 'link-local only',
      eth1: 'no IPv4 address',
    });
  });

  it('IPv6 family on a dual-stack host', () => {
    expect(verdicts('master-node', { family: 'ipv6' }, false)).toEqual({
      lo: 'loopback',
      eno1: 'no IPv6 address',
      ens3f0: 'usable',
    });
  });

  it('a CIDR exclude', () => {
    expect(verdicts('master-node', { excludes: buildExcludes(['203.0.113.0/24'], false) })).toEqual(
      {
        lo: 'loopback',
        eno1: 'excluded (203.0.113.0/24)',
        ens3f0: 'chosen',
      },
    );
  });
});
