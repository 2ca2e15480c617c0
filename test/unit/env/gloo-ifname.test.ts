import { describe, expect, it } from 'vitest';
import { checkGlooIfname } from '../../../src/env/gloo-ifname.js';
import { ConfigError } from '../../../src/errors.js';
import { EXIT } from '../../../src/exit-status.js';
import { glooInterfaceNames } from '../../../src/resolve/gloo-pick.js';
import { loadFacts } from '../../fixtures/facts/facts-fixtures.js';

// node-0: eno1 (1 Gb/s, 203.0.113.10/24) and ens3f0 (100 Gb/s, 198.18.60.10/24).
const facts = loadFacts('master-node');
const context = {
  ncclIfname: '=ens3f0',
  chosen: 'ens3f0',
  facts,
  from: { name: 'GLOO_SOCKET_IFNAME', from: 'env-file' } as const,
  multiNode: true,
};

describe('glooInterfaceNames (torch splits with std::getline on ",")', () => {
  it.each([
    ['ens3f0', ['ens3f0']],
    ['ens3f0,eno1', ['ens3f0', 'eno1']],
    ['ens3f0,', ['ens3f0']],
    [',ens3f0', ['', 'ens3f0']],
    ['ens3f0,,eno1', ['ens3f0', '', 'eno1']],
  ])('%j → %j', (value, names) => {
    expect(glooInterfaceNames(value)).toEqual(names);
  });
});

describe('checkGlooIfname', () => {
  const check = (value: string, over: Partial<typeof context> = {}) =>
    checkGlooIfname('GLOO_SOCKET_IFNAME', value, { ...context, ...over });

  /** The one-line ConfigError (exit 78) a value gets. */
  function refusal(value: string, over: Partial<typeof context> = {}): string {
    try {
      check(value, over);
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).exitCode).toBe(EXIT.config);
      const message = (error as Error).message;
      expect(message.split('\n')).toHaveLength(1);
      expect(message).toContain(`GLOO_SOCKET_IFNAME='${value}' (set in the env file)`);
      expect(message).toMatch(/use GLOO_SOCKET_IFNAME=\w+, or --force to let nccl-run replace it$/);
      return message;
    }
    throw new Error(`${value} was accepted`);
  }

  it.each(['ens3f0', 'ens3f0,'])('accepts %j, an existing interface with an address', (value) => {
    expect(check(value)).toEqual([]);
  });

  it('accepts a list as long as an include-mode NCCL list', () => {
    expect(check('ens3f0,eno1', { ncclIfname: 'ens3f0,eno1' })).toEqual([]);
  });

  it.each([
    '198.18.60.10',
    '2001:db8:60::10',
    '[2001:db8:60::10]',
    '198.18.60.10/24',
    'eno1,203.0.113.10',
    'fe80::1%eno1',
  ])('refuses the address in %j', (value) => {
    expect(refusal(value)).toContain('holds the address');
  });

  it.each([
    ['^docker,lo', '^docker'],
    ['=ens3f0', '=ens3f0'],
  ])('refuses %j, NCCL syntax that Gloo reads as a name', (value, first) => {
    const message = refusal(value);
    expect(message).toContain("uses NCCL's ^/= syntax");
    expect(message).toContain(`"Unable to find address for: ${first}"`);
  });

  it('refuses an interface this host does not have', () => {
    expect(refusal('eth9')).toContain('names eth9, which this host does not have');
  });

  it('refuses an interface with no address', () => {
    const bare = loadFacts('docker-host'); // eno2 holds no address
    expect(refusal('eno2', { chosen: 'eno1', facts: bare })).toContain(
      'names eno2, which has no IP address',
    );
  });

  it('checks TP_SOCKET_IFNAME by the same rules, naming it', () => {
    expect(() => checkGlooIfname('TP_SOCKET_IFNAME', '^lo', context)).toThrow(
      "TP_SOCKET_IFNAME='^lo' (set in the env file) uses NCCL's ^/= syntax",
    );
  });

  it('reads TP_SOCKET_IFNAME as one name: TensorPipe does not split a comma list', () => {
    expect(() => checkGlooIfname('TP_SOCKET_IFNAME', 'ens3f0,eno1', context)).toThrow(
      "TP_SOCKET_IFNAME='ens3f0,eno1' (set in the env file) names ens3f0,eno1, which this host does not have",
    );
  });

  it('warns about a comma list of a different length than NCCL_SOCKET_IFNAME', () => {
    expect(check('ens3f0,eno1')).toEqual([
      "GLOO_SOCKET_IFNAME='ens3f0,eno1' (set in the env file) lists 2 interfaces but NCCL_SOCKET_IFNAME='=ens3f0' lists 1; Gloo and NCCL will not use the same interfaces",
    ]);
  });

  it('does not count against an exclude-mode NCCL list, which has no length', () => {
    expect(check('ens3f0,eno1', { ncclIfname: '^docker,lo,virbr' })).toEqual([]);
  });

  it('does not compare a single name: only a comma list can disagree in length', () => {
    expect(check('ens3f0', { ncclIfname: 'ens,eno' })).toEqual([]);
  });

  it.each([',ens3f0', 'ens3f0,,eno1'])(
    'refuses %j: torch makes no device for an empty entry (makeTCPDevice)',
    (value) => {
      expect(refusal(value, { ncclIfname: 'ens3f0,eno1' })).toContain(
        `has an empty entry, which torch refuses when it makes Gloo's devices ("interface or hostname can't be empty")`,
      );
    },
  );

  describe('in a multi-node job, what Gloo binds but no peer can reach', () => {
    const downNic = loadFacts('lab-down-nic'); // eth0 down, holding 198.18.100.5
    const linkLocal = loadFacts('link-local-only'); // eth0 169.254.33.7 + fe80::, eth1 fe80:: only

    it('warns about a down interface: only the peers that connect to it fail', () => {
      expect(check('eth0', { facts: downNic, chosen: 'eth1' })).toEqual([
        "GLOO_SOCKET_IFNAME='eth0' (set in the env file) names eth0, which is down (down): Gloo binds 198.18.100.5 there, and every peer that connects to this node (of a pair, the side with the greater address connects) cannot reach it",
      ]);
    });

    it.each(['lo', 'ens3f0,lo'])('refuses %j: loopback', (value) => {
      expect(refusal(value, { ncclIfname: 'ens3f0,lo' })).toContain(
        'names lo, whose address Gloo binds, 127.0.0.1, is loopback',
      );
    });

    it('refuses an interface whose only address is IPv6 link-local: the peers get its scope id', () => {
      expect(refusal('eth1', { facts: linkLocal, chosen: 'eth0' })).toContain(
        'names eth1, whose address Gloo binds, fe80::2e0:4cff:fe68:1a08, is IPv6 link-local',
      );
    });

    it('warns where Gloo binds an IPv4 link-local address: peers on the same link reach it', () => {
      expect(check('eth0', { facts: linkLocal, chosen: 'eth0' })).toEqual([
        "GLOO_SOCKET_IFNAME='eth0' (set in the env file) names eth0, whose address Gloo binds, 169.254.33.7, is IPv4 link-local: only nodes on this same link can reach it",
      ]);
    });

    it.each([
      ['lo', facts],
      ['eth1', linkLocal],
    ])('accepts %j on a single node, where every rank is on this host', (value, on) => {
      expect(check(value, { facts: on, multiNode: false })).toEqual([]);
    });
  });
});
