import { describe, expect, it } from 'vitest';
import type { ResolveContext, StrategyOutcome } from '../../../../src/resolve/decision.js';
import { explicit } from '../../../../src/resolve/strategies/explicit.js';
import {
  type FixtureName,
  loadFacts,
  makeContext,
} from '../../../fixtures/facts/facts-fixtures.js';

type Row = [string, FixtureName, Partial<ResolveContext>, StrategyOutcome];

describe('explicit: --iface', () => {
  it.each<Row>([
    [
      'nothing given',
      'docker-host',
      {},
      { outcome: 'skipped', reason: 'no --iface given and no NCCL_SOCKET_IFNAME to keep' },
    ],
    [
      'the named interface',
      'infiniband-node',
      { explicitInterfaces: ['ib0'] },
      {
        outcome: 'picked',
        interface: 'ib0',
        address: '198.18.32.17',
        reason: '--iface ib0, IPv4 198.18.32.17',
      },
    ],
    [
      'an excluded interface: the user said so',
      'docker-host',
      { explicitInterfaces: ['docker0'] },
      {
        outcome: 'picked',
        interface: 'docker0',
        address: '172.17.0.1',
        reason: '--iface docker0, IPv4 172.17.0.1',
      },
    ],
    [
      'the first usable of a list',
      'docker-host',
      { explicitInterfaces: ['ens9', 'eno2', 'eno1'] },
      {
        outcome: 'picked',
        interface: 'eno1',
        address: '198.18.4.21',
        reason: '--iface eno1 (first usable of ens9,eno2,eno1), IPv4 198.18.4.21',
      },
    ],
    [
      'a missing interface',
      'docker-host',
      { explicitInterfaces: ['ens9'] },
      { outcome: 'fatal', reason: '--iface ens9 is not usable (ens9: does not exist)' },
    ],
    [
      'an IB port that is down',
      'infiniband-node',
      { explicitInterfaces: ['ib1'] },
      { outcome: 'fatal', reason: '--iface ib1 is not usable (ib1: down (no carrier))' },
    ],
    [
      'a bond member',
      'bond-host',
      { explicitInterfaces: ['ens1f0'] },
      { outcome: 'fatal', reason: '--iface ens1f0 is not usable (ens1f0: bond member of bond0)' },
    ],
    [
      'an interface without an address of the family',
      'docker-host',
      { explicitInterfaces: ['eno1'], family: 'ipv6' },
      { outcome: 'fatal', reason: '--iface eno1 is not usable (eno1: link-local only)' },
    ],
    [
      'none of a list',
      'bond-host',
      { explicitInterfaces: ['ens2f0', 'ens9', 'bond0.2973'], family: 'ipv6' },
      {
        outcome: 'fatal',
        reason:
          'none of --iface ens2f0,ens9,bond0.2973 is usable (ens2f0: down (no carrier); ens9: does not exist; bond0.2973: no IPv6 address)',
      },
    ],
    [
      'loopback, when named, for a single-node debugging run',
      'bond-host',
      { explicitInterfaces: ['ens9', 'lo'] },
      {
        outcome: 'picked',
        interface: 'lo',
        address: '127.0.0.1',
        reason: '--iface lo (first usable of ens9,lo), IPv4 127.0.0.1',
      },
    ],
    [
      '--iface wins over NCCL_SOCKET_IFNAME',
      'bond-host',
      { explicitInterfaces: ['eno1'], userNcclIfname: 'bond0' },
      {
        outcome: 'picked',
        interface: 'eno1',
        address: '203.0.113.42',
        reason: '--iface eno1, IPv4 203.0.113.42',
      },
    ],
  ])('%s', (_, fixture, context, outcome) => {
    expect(explicit(loadFacts(fixture), makeContext(context))).toEqual(outcome);
  });
});

describe('explicit: a NCCL_SOCKET_IFNAME the user already set', () => {
  const bondMaster = { master: { host: 'trn-node-01', addresses: ['198.18.16.1'] } };
  it.each<Row>([
    [
      'no master: Gloo and TensorPipe follow NCCL, the first match in the kernel order',
      'bond-host',
      { userNcclIfname: 'bond0' },
      {
        outcome: 'picked',
        interface: 'bond0',
        address: '198.18.8.42',
        reason:
          'NCCL_SOCKET_IFNAME=bond0 is kept; no master is known, so Gloo and TensorPipe follow NCCL: NCCL binds bond0 198.18.8.42',
      },
    ],
    [
      // A prefix also takes bond0.2973; NCCL binds bond0, the first, but Gloo needs the master's network.
      "the match that reaches the master, not NCCL's first",
      'bond-host',
      { userNcclIfname: 'bond0', ...bondMaster },
      {
        outcome: 'picked',
        interface: 'bond0.2973',
        address: '198.18.16.42',
        reason:
          'NCCL_SOCKET_IFNAME=bond0 is kept; NCCL binds bond0 198.18.8.42; of its matches, bond0.2973 reaches the master: 198.18.16.0/24 on bond0.2973 contains master 198.18.16.1',
      },
    ],
    [
      'an exact name that reaches the master',
      'bond-host',
      { userNcclIfname: '=bond0.2973', ...bondMaster },
      {
        outcome: 'picked',
        interface: 'bond0.2973',
        address: '198.18.16.42',
        reason:
          'NCCL_SOCKET_IFNAME==bond0.2973 is kept; NCCL binds bond0.2973 198.18.16.42, which reaches the master: 198.18.16.0/24 on bond0.2973 contains master 198.18.16.1',
      },
    ],
    [
      'an exclude list skips lo and docker0',
      'docker-host',
      { userNcclIfname: '^docker,lo' },
      {
        outcome: 'picked',
        interface: 'eno1',
        address: '198.18.4.21',
        reason:
          'NCCL_SOCKET_IFNAME=^docker,lo is kept; no master is known, so Gloo and TensorPipe follow NCCL: NCCL binds eno1 198.18.4.21',
      },
    ],
    [
      // Excluding exactly eno1 leaves lo, first in the kernel order: the real NCCL binds 127.0.0.1.
      'an exact exclude leaves lo to NCCL: fatal for a multi-node job',
      'docker-host',
      { userNcclIfname: '^=eno1' },
      {
        outcome: 'fatal',
        reason:
          'NCCL_SOCKET_IFNAME=^=eno1 is kept, no master is known, and NCCL binds lo 127.0.0.1, which is loopback; --force replaces it',
      },
    ],
    [
      'lo, when NCCL takes it, serves a single-node job',
      'docker-host',
      { userNcclIfname: '^=eno1', singleNode: true },
      {
        outcome: 'picked',
        interface: 'lo',
        address: '127.0.0.1',
        reason:
          'NCCL_SOCKET_IFNAME=^=eno1 is kept; no master is known, so Gloo and TensorPipe follow NCCL: NCCL binds lo 127.0.0.1',
      },
    ],
    [
      'ib skips a down port',
      'infiniband-node',
      { userNcclIfname: 'ib' },
      {
        outcome: 'picked',
        interface: 'ib0',
        address: '198.18.32.17',
        reason:
          'NCCL_SOCKET_IFNAME=ib is kept; no master is known, so Gloo and TensorPipe follow NCCL: NCCL binds ib0 198.18.32.17',
      },
    ],
    [
      'NCCL 2.28+ takes no interface that is not running',
      'bond-host',
      { userNcclIfname: 'ens2' },
      {
        outcome: 'fatal',
        reason:
          'NCCL_SOCKET_IFNAME=ens2 matches no interface NCCL would take (ens2f0: not running (NCCL 2.28+ skips it)); NCCL will stop with "no socket interface found"; --force replaces it',
      },
    ],
    [
      'NCCL 2.18-2.27 binds a down port and fails',
      'bond-host',
      { userNcclIfname: 'ens2', ncclRules: '2.18-2.27' },
      {
        outcome: 'fatal',
        reason:
          'NCCL_SOCKET_IFNAME=ens2 is kept, no master is known, and NCCL binds ens2f0 198.18.12.42, which is down (no carrier); --force replaces it',
      },
    ],
    [
      'matches nothing at all',
      'multus-pod',
      { userNcclIfname: 'mlx' },
      {
        outcome: 'fatal',
        reason: "NCCL_SOCKET_IFNAME=mlx matches none of this host's interfaces (lo, eth0, net1)",
      },
    ],
    [
      "'=^' is an exact name with a caret in it, and says so",
      'multus-pod',
      { userNcclIfname: '=^eth0' },
      {
        outcome: 'fatal',
        reason:
          "NCCL_SOCKET_IFNAME==^eth0 matches none of this host's interfaces (lo, eth0, net1); NCCL takes '^' after '=' as part of the name, so to exclude eth0 write ^=eth0",
      },
    ],
    [
      'IPv6: NCCL walks the IPv6 addresses only (AF_INET6 exported)',
      'master-node',
      { userNcclIfname: '^lo', family: 'ipv6' },
      {
        outcome: 'picked',
        interface: 'ens3f0',
        address: '2001:db8:60::10',
        reason:
          'NCCL_SOCKET_IFNAME=^lo is kept; no master is known, so Gloo and TensorPipe follow NCCL: NCCL binds ens3f0 2001:db8:60::10',
      },
    ],
    [
      // NCCL walks the IPv4 addresses (AF_INET, kept) and binds eno1, which the IPv6 job cannot use.
      "a kept NCCL_SOCKET_FAMILY is NCCL's, though the job is IPv6",
      'master-node',
      { userNcclIfname: '^lo', family: 'ipv6', userNcclFamily: 'AF_INET' },
      {
        outcome: 'fatal',
        reason:
          'NCCL_SOCKET_IFNAME=^lo is kept, no master is known, and NCCL binds eno1 203.0.113.10, which has no IPv6 address; --force replaces it',
      },
    ],
  ])('%s', (_, fixture, context, outcome) => {
    expect(explicit(loadFacts(fixture), makeContext(context))).toEqual(outcome);
  });

  it('lists a long host in short when nothing matches', () => {
    const outcome = explicit(loadFacts('k8s-node'), makeContext({ userNcclIfname: 'ib' }));
    expect(outcome.outcome).toBe('fatal');
    expect(outcome.reason).toMatch(
      /^NCCL_SOCKET_IFNAME=ib matches none of this host's interfaces \(lo, ens5, kube-ipvs0, .*, and 494 more\)$/,
    );
  });
});
