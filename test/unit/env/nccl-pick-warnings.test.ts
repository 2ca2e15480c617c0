/**
 * Warnings about what NCCL itself will bind (src/env/nccl-pick-warnings.ts),
 * over the NCCL oracle's hosts.
 */
import { describe, expect, it } from 'vitest';
import { bindAddressWarning, ncclSettingWarnings } from '../../../src/env/nccl-pick-warnings.js';
import { type NcclSettings, ncclPick } from '../../../src/nccl/nccl-pick.js';
import { reachMaster } from '../../../src/resolve/reach-master.js';
import { type FixtureName, loadFacts, makeContext } from '../../fixtures/facts/facts-fixtures.js';

function warningsFor(
  fixture: FixtureName,
  settings: Partial<NcclSettings>,
  masters: string[],
  commIdAddress: string | null = null,
  chosen = 'eth1',
): string[] {
  const facts = loadFacts(fixture);
  const full: NcclSettings = { ifname: null, family: null, commId: null, ...settings };
  const family = masters[0]?.includes(':') ? 'ipv6' : 'ipv4';
  const context = makeContext({ family, master: { host: 'master', addresses: masters } });
  return ncclSettingWarnings({
    facts,
    settings: full,
    pick: ncclPick(facts, full, '2.18-2.27', commIdAddress),
    reach: reachMaster(facts, context),
    chosen,
    keptIfname:
      full.ifname === null
        ? null
        : {
            value: full.ifname,
            from: { name: 'NCCL_SOCKET_IFNAME', from: 'nccl-conf', file: '/etc/nccl.conf' },
          },
    commIdAddress,
    masterAddresses: masters,
  });
}

describe('ncclSettingWarnings', () => {
  it('a kept list under which NCCL binds the management NIC: names it, and the one that reaches', () => {
    expect(
      warningsFor('lab-mgmt-first', { ifname: '^docker,lo', family: 'AF_INET' }, ['198.18.2.1']),
    ).toEqual([
      "NCCL_SOCKET_IFNAME='^docker,lo' (yours, kept, from /etc/nccl.conf): NCCL binds eth0 198.18.100.5, which does not reach the master 198.18.2.1; eth1 does (198.18.2.0/24 on eth1 contains master 198.18.2.1); set NCCL_SOCKET_IFNAME==eth1, or --force replaces it",
    ]);
  });

  it('says when the address NCCL binds is link-local', () => {
    const [warning] = warningsFor('lab-dual-stack', { ifname: '^docker,lo', family: 'AF_INET6' }, [
      '2001:db8:6::1',
    ]);
    expect(warning).toMatch(
      /NCCL binds eth0 fe80::\S+ \(link-local: no peer can reach it\), which does not reach the master 2001:db8:6::1; eth1 does/,
    );
  });

  it('says when the interface NCCL binds is down', () => {
    const [warning] = warningsFor('lab-down-nic', { ifname: 'eth', family: 'AF_INET' }, [
      '198.18.11.1',
    ]);
    expect(warning).toMatch(
      /NCCL binds eth0 198\.18\.100\.5 \(eth0 is down: NCCL cannot bind it\)/,
    );
  });

  it('nothing when NCCL binds the interface that reaches the master', () => {
    expect(
      warningsFor('lab-prefix-names', { ifname: 'eth10' }, ['198.18.10.1'], null, 'eth10'),
    ).toEqual([]);
  });

  it('--iface chose another interface than NCCL binds under the kept list', () => {
    expect(warningsFor('lab-prefix-names', { ifname: '=eth1' }, [], null, 'eth10')).toEqual([
      "NCCL_SOCKET_IFNAME='=eth1' (yours, kept, from /etc/nccl.conf): NCCL binds eth1 198.18.100.5, but Gloo and TensorPipe use eth10: the job would talk over two interfaces; set NCCL_SOCKET_IFNAME==eth10, or --force replaces it",
    ]);
  });

  it('NCCL_COMM_ID: where the bootstrap goes instead', () => {
    expect(
      warningsFor(
        'lab-mgmt-first',
        { ifname: '=eth1', commId: '198.18.100.1:29600' },
        ['198.18.2.1'],
        '198.18.100.1',
      ),
    ).toEqual([
      "NCCL_COMM_ID=198.18.100.1:29600 is set: NCCL's bootstrap meets at 198.18.100.1 instead of the id torch hands it, and listens on the first interface whose network holds that address, ignoring NCCL_SOCKET_IFNAME ('=eth1'): eth0 198.18.100.5; unset NCCL_COMM_ID unless that is meant",
    ]);
  });
});

describe('bindAddressWarning', () => {
  const facts = loadFacts('lab-multi-address');
  it.each<[string, string, string[], RegExp | null]>([
    [
      "IPv4: the first address is not on the master's network",
      '198.18.9.5',
      ['198.18.8.1'],
      /^NCCL binds 198\.18\.9\.5 on eth1, its first IPv4 address, not 198\.18\.8\.5 on the master's network 198\.18\.8\.0\/24/,
    ],
    [
      'IPv6: newest first',
      '2001:db8:9::5',
      ['2001:db8:8::1'],
      /not 2001:db8:8::5 on the master's network 2001:db8:8::\/64.*newest first/,
    ],
    ['the first address is on it', '198.18.9.5', ['198.18.9.1'], null],
    ['a master no prefix holds (routed)', '198.18.9.5', ['198.19.200.10'], null],
  ])('%s', (_, address, masters, expected) => {
    const warning = bindAddressWarning(facts, { interface: 'eth1', address }, masters);
    if (expected === null) expect(warning).toBeNull();
    else expect(warning).toMatch(expected);
  });
});
