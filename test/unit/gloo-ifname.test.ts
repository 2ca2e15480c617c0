import { describe, expect, it } from 'vitest';
import { checkGlooIfname, glooInterfaceNames, usesNcclSyntax } from '../../src/env/gloo-ifname.js';
import { ConfigError, EXIT } from '../../src/errors.js';
import { loadFacts } from '../fixtures/facts/facts-fixtures.js';

// node-0: eno1 (1 Gb/s, 203.0.113.10/24) and ens3f0 (100 Gb/s, 198.18.60.10/24).
const facts = loadFacts('master-node');
const context = { ncclIfname: '=ens3f0', chosen: 'ens3f0', facts };

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

describe('usesNcclSyntax', () => {
  it.each([
    ['^docker,lo', true],
    ['=ens3f0', true],
    ['ens3f0,=eno1', true],
    ['ens3f0,eno1', false],
    ['a^b', false],
  ])('%j → %s', (value, expected) => {
    expect(usesNcclSyntax(value)).toBe(expected);
  });
});

describe('checkGlooIfname', () => {
  it.each(['ens3f0', 'ens3f0,'])('accepts %j, an existing interface with an address', (value) => {
    expect(checkGlooIfname(value, context)).toEqual([]);
  });

  it('accepts a list as long as an include-mode NCCL list', () => {
    expect(checkGlooIfname('ens3f0,eno1', { ...context, ncclIfname: 'ens3f0,eno1' })).toEqual([]);
  });

  it.each([
    '198.18.60.10',
    '2001:db8:60::10',
    '[2001:db8:60::10]',
    '198.18.60.10/24',
    'eno1,203.0.113.10',
    'fe80::1%eno1',
  ])('rejects the address in %j with a ConfigError (exit 78)', (value) => {
    const attempt = () => checkGlooIfname(value, context);
    expect(attempt).toThrow(ConfigError);
    try {
      attempt();
    } catch (error) {
      expect((error as ConfigError).exitCode).toBe(EXIT.config);
      const message = (error as Error).message;
      expect(message).toContain(`GLOO_SOCKET_IFNAME='${value}'`);
      expect(message).toContain('Gloo takes interface names only, e.g. GLOO_SOCKET_IFNAME=ens3f0');
      expect(message.split('\n')).toHaveLength(1);
    }
  });

  it.each([
    ['^docker,lo', '^docker'],
    ['=ens3f0', '=ens3f0'],
  ])('warns that %j is NCCL syntax Gloo reads as a name', (value, first) => {
    const [warning, ...others] = checkGlooIfname(value, context);
    expect(others).toEqual([]);
    expect(warning).toContain(`GLOO_SOCKET_IFNAME='${value}' uses NCCL's ^/= syntax`);
    expect(warning).toContain(`"Unable to find address for: ${first}"`);
    expect(warning).toContain('use GLOO_SOCKET_IFNAME=ens3f0');
  });

  it('warns about a comma list of a different length than NCCL_SOCKET_IFNAME', () => {
    expect(checkGlooIfname('ens3f0,eno1', context)).toEqual([
      "GLOO_SOCKET_IFNAME='ens3f0,eno1' lists 2 interfaces but NCCL_SOCKET_IFNAME='=ens3f0' lists 1; Gloo and NCCL will not use the same interfaces",
    ]);
  });

  it('does not count against an exclude-mode NCCL list, which has no length', () => {
    expect(checkGlooIfname('ens3f0,eno1', { ...context, ncclIfname: '^docker,lo,virbr' })).toEqual(
      [],
    );
  });

  it('does not compare a single name: only a comma list can disagree in length', () => {
    expect(checkGlooIfname('ens3f0', { ...context, ncclIfname: 'ens,eno' })).toEqual([]);
  });

  it('warns about an interface this host does not have', () => {
    expect(checkGlooIfname('eth9', context)).toEqual([
      `GLOO_SOCKET_IFNAME='eth9' names eth9, which this host does not have; Gloo will fail with "Unable to find address for: eth9"`,
    ]);
  });

  it('warns about an interface with no address', () => {
    const bare = loadFacts('docker-host'); // eno2 holds no address
    expect(checkGlooIfname('eno2', { ...context, chosen: 'eno1', facts: bare })).toEqual([
      `GLOO_SOCKET_IFNAME='eno2' names eno2, which has no IP address; Gloo will fail with "Unable to find address for: eno2"`,
    ]);
  });

  it('warns about an empty entry, for which Gloo falls back to the hostname', () => {
    expect(checkGlooIfname(',ens3f0', { ...context, ncclIfname: 'ens3f0,eno1' })).toEqual([
      "GLOO_SOCKET_IFNAME=',ens3f0' has an empty entry; for it Gloo binds to whatever this host's hostname resolves to",
    ]);
  });
});
