/**
 * SPEC "Causes users meet": a VPN through which the master is reached is the
 * job's network: chosen with a warning (src/env/vpn-warning.ts), and a kept
 * NCCL_SOCKET_IFNAME naming it is not reported as missing the master
 * (src/resolve/strategies/explicit.ts through candidates.ts reachContext).
 */
import { describe, expect, it } from 'vitest';
import { vpnWarning } from '../../../src/env/vpn-warning.js';
import type { Decision, ResolveContext } from '../../../src/resolve/decision.js';
import { buildExcludes } from '../../../src/resolve/excludes.js';
import { explicit } from '../../../src/resolve/strategies/explicit.js';
import { loadFacts, makeContext } from '../../fixtures/facts/facts-fixtures.js';

const facts = loadFacts('tailscale-host');
// The master on the tailnet, reached by tailscale0's 100.64.0.0/10 route.
const onTailnet: Partial<ResolveContext> = {
  master: { host: 'ws-lab-1', addresses: ['100.90.1.2'] },
  routesToMaster: [
    {
      destination: '100.90.1.2',
      interface: 'tailscale0',
      source: '100.101.102.103',
      gateway: null,
      type: 'unicast',
    },
  ],
};
const decision = (strategy: Decision['strategy']): Decision => ({
  interface: 'tailscale0',
  address: '100.101.102.103',
  family: 'ipv4',
  strategy,
  reason: '',
  trace: [],
});

describe('a VPN the master is reached through', () => {
  it('chosen by route: a warning names the tunnel, its MTU and the ways out', () => {
    expect(vpnWarning(facts, decision('route'), makeContext(onTailnet))).toMatch(
      /^tailscale0 is a VPN tunnel \(prefix tailscale, excluded by default\).*MTU 1280.*--iface tailscale0.*--exclude tailscale/,
    );
  });

  it('no warning where the user named it, or excluded it by name', () => {
    expect(vpnWarning(facts, decision('explicit'), makeContext(onTailnet))).toBeNull();
    const excluded = makeContext({ ...onTailnet, excludes: buildExcludes(['tailscale'], false) });
    expect(vpnWarning(facts, decision('route'), excluded)).toBeNull();
  });

  it('a kept NCCL_SOCKET_IFNAME=tailscale0 reaches the master (no false claim)', () => {
    const outcome = explicit(
      facts,
      makeContext({ ...onTailnet, userNcclIfname: 'tailscale0', ncclRules: '2.18-2.27' }),
    );
    expect(outcome).toMatchObject({ outcome: 'picked', interface: 'tailscale0' });
    expect(outcome.reason).toContain('which reaches the master');
  });
});
