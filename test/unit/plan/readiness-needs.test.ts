/**
 * What the plan tells the readiness checks (src/plan/readiness-needs.ts):
 * the job's needs from what it knows, and the one refusal that names every
 * certain failure. The checks themselves are test/unit/readiness/'s.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/errors.js';
import type { RouteAnswer } from '../../../src/host/host-facts.js';
import { assessReadiness, readinessNeeds } from '../../../src/plan/readiness-needs.js';
import type { Decision } from '../../../src/resolve/decision.js';
import { loadFacts } from '../../fixtures/facts/facts-fixtures.js';
import { makeJob } from '../../fixtures/job-shape.js';
import { jobNeeds, nodeFacts } from '../../fixtures/readiness.js';

const facts = loadFacts('lab-mgmt-first');
const decision: Decision = {
  interface: 'eth1',
  address: '198.18.2.5',
  family: 'ipv4',
  strategy: 'subnet',
  reason: 'test',
  trace: [],
};
const route = (destination: string, iface: string, type: RouteAnswer['type']): RouteAnswer => ({
  destination,
  interface: iface,
  source: null,
  gateway: null,
  type,
});

const needsOf = (overrides: Partial<Parameters<typeof readinessNeeds>[0]> = {}) =>
  readinessNeeds({
    job: makeJob({ nprocPerNode: '8' }),
    torchVersion: '2.6.0',
    ncclVersion: '2.22.3',
    ncclEnv: {},
    transport: 'socket',
    requireTransport: null,
    role: null,
    singleNode: false,
    decision,
    facts,
    routesToMaster: [route('198.18.2.1', 'eth0', 'unicast')],
    ...overrides,
  });

describe('readinessNeeds', () => {
  it('the chosen network: the other usable interfaces but lo, and the route back to the master', () => {
    expect(needsOf().network).toEqual({
      interface: 'eth1',
      family: 'ipv4',
      otherInterfaces: ['eth0'],
      routesBack: [{ address: '198.18.2.1', interface: 'eth0' }],
    });
    expect(needsOf().nprocPerNode).toBe('8');
  });

  it("no route back from this host's own address (the master is here), nor on one node", () => {
    expect(
      needsOf({ routesToMaster: [route('198.18.2.5', 'lo', 'local')] }).network?.routesBack,
    ).toEqual([]);
    expect(needsOf({ singleNode: true }).network?.routesBack).toEqual([]);
  });

  it('the store host: its role where the check found it, else a single-node job', () => {
    expect(needsOf().storeHost).toBe(false);
    expect(needsOf({ singleNode: true }).storeHost).toBe(true);
    const host = { role: 'store host', address: null, warning: null, clientIfTaken: null } as const;
    expect(needsOf({ role: host }).storeHost).toBe(true);
    expect(needsOf({ role: { role: 'worker', address: '198.18.2.1' } }).storeHost).toBe(false);
  });
});

describe('assessReadiness', () => {
  it('a certain failure is one ConfigError (78) naming the check, its evidence and its fix', () => {
    const node = nodeFacts({
      shm: {
        path: '/dev/shm',
        unusable: '/dev/shm does not exist',
        sizeBytes: 0,
        freeBytes: 0,
        blockBytes: 4096,
        tmpfs: false,
      },
    });
    const { refused, findings } = assessReadiness(jobNeeds({ nprocPerNode: '4' }), node, []);
    expect(refused).toBeInstanceOf(ConfigError);
    expect(refused?.exitCode).toBe(78);
    expect(refused?.message).toMatch(
      /^this node is not ready for the job: shm: \/dev\/shm does not exist: .*; fix: /,
    );
    expect(findings.find((finding) => finding.check === 'shm')?.level).toBe('refused');
    // Skipped, it refuses nothing.
    expect(assessReadiness(jobNeeds({ nprocPerNode: '4' }), node, ['shm']).refused).toBeNull();
  });
});
