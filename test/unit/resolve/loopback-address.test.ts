/**
 * SPEC "Causes users meet": a routable address held only by lo (NVIDIA/nccl#1053,
 * BGP unnumbered: the node's /32 on lo, lan0 and lan1 link-local only).
 * src/resolve/loopback-address.ts, through the route and explicit strategies.
 */
import { describe, expect, it } from 'vitest';
import type { ResolveContext } from '../../../src/resolve/decision.js';
import { explicit } from '../../../src/resolve/strategies/explicit.js';
import { route } from '../../../src/resolve/strategies/route.js';
import { loadFacts, makeContext } from '../../fixtures/facts/facts-fixtures.js';

const facts = loadFacts('bgp-unnumbered-nccl-1053');
// `ip route get` on such a node: out lan0, from the /32 on lo.
const remoteMaster: Partial<ResolveContext> = {
  master: { host: 'bgp-node-0', addresses: ['198.18.77.4'] },
  routesToMaster: [
    {
      destination: '198.18.77.4',
      interface: 'lan0',
      source: '198.18.77.5',
      gateway: null,
      type: 'unicast',
    },
  ],
};

describe('a routable /32 held only by lo', () => {
  it('the refusal names lo, the address and the fix, not "lan0 has no IPv4 address"', () => {
    const outcome = route(facts, makeContext(remoteMaster));
    expect(outcome.outcome).toBe('fatal');
    expect(outcome.reason).toMatch(
      /^route to 198\.18\.77\.4 leaves via lan0 from 198\.18\.77\.5, an address only lo holds .*127\.0\.0\.1.*give 198\.18\.77\.5 an interface of its own \(ip link add nccl0 type dummy.*--iface nccl0$/,
    );
    expect(outcome.reason).not.toContain('has no IPv4 address');
  });

  it('--iface lo with a remote master in a multi-node job is refused (69), naming 127.0.0.1 and the fix', () => {
    const outcome = explicit(facts, makeContext({ ...remoteMaster, explicitInterfaces: ['lo'] }));
    expect(outcome).toEqual({
      outcome: 'fatal',
      reason: expect.stringMatching(
        /--iface lo is not usable \(lo: lo is this host's loopback: NCCL binds its first address, 127\.0\.0\.1, and the master 198\.18\.77\.4 is another host.*give 198\.18\.77\.5 an interface of its own/,
      ),
    });
  });

  it('--iface lo stays fine for a single-node job', () => {
    const outcome = explicit(
      facts,
      makeContext({ ...remoteMaster, explicitInterfaces: ['lo'], singleNode: true }),
    );
    expect(outcome).toMatchObject({ outcome: 'picked', interface: 'lo', address: '127.0.0.1' });
  });
});
