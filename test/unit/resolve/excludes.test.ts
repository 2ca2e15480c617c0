import { describe, expect, it } from 'vitest';
import type { ExcludeRule } from '../../../src/resolve/decision.js';
import {
  buildExcludes,
  DEFAULT_EXCLUDES,
  describeExclude,
  excludedBy,
  parseExcludeRule,
} from '../../../src/resolve/excludes.js';
import { type FixtureName, loadFacts } from '../../fixtures/facts/facts-fixtures.js';

describe('parseExcludeRule', () => {
  it.each<[string, ExcludeRule]>([
    ['docker', { kind: 'prefix', value: 'docker' }],
    ['br-', { kind: 'prefix', value: 'br-' }],
    [' veth ', { kind: 'prefix', value: 'veth' }],
    ['=eth1', { kind: 'exact', value: 'eth1' }],
    ['=bond0.2973', { kind: 'exact', value: 'bond0.2973' }],
    ['172.16.0.0/12', { kind: 'cidr', network: '172.16.0.0', prefixLength: 12, family: 'ipv4' }],
    ['198.18.4.21/32', { kind: 'cidr', network: '198.18.4.21', prefixLength: 32, family: 'ipv4' }],
    ['0.0.0.0/0', { kind: 'cidr', network: '0.0.0.0', prefixLength: 0, family: 'ipv4' }],
    ['2001:db8::/32', { kind: 'cidr', network: '2001:db8::', prefixLength: 32, family: 'ipv6' }],
    [
      '2001:0DB8:0000::/48',
      { kind: 'cidr', network: '2001:db8::', prefixLength: 48, family: 'ipv6' },
    ],
    [
      'fd7a:115c:a1e0::/48',
      { kind: 'cidr', network: 'fd7a:115c:a1e0::', prefixLength: 48, family: 'ipv6' },
    ],
  ])('%j → %j', (text, rule) => {
    expect(parseExcludeRule(text)).toEqual(rule);
  });

  it.each([
    ['', /empty exclude entry/],
    ['=', /'=' names no interface; write =NAME/],
    ['172.16.0.0/33', /'172.16.0.0\/33': prefix length '33' must be 0-32 for IPv4/],
    ['2001:db8::/129', /prefix length '129' must be 0-128 for IPv6/],
    ['198.18.0.0/-1', /prefix length '-1' must be 0-32/],
    ['198.18.0.0/', /prefix length '' must be 0-32/],
    ['198.18.0.0/24/1', /is not a CIDR block; expected ADDRESS\/PREFIX/],
    ['10.0.0/8', /'10.0.0\/8' is not a CIDR block/],
    ['eth0/24', /'eth0\/24' is not a CIDR block/],
    [
      '172.16.0.1/12',
      /'172.16.0.1\/12' has host bits set; did you mean 172.16.0.0\/12 \(or 172.16.0.1\/32/,
    ],
    ['2001:db8::1/64', /did you mean 2001:db8::\/64 \(or 2001:db8::1\/128/],
    ['198.18.0.1', /'198.18.0.1' is an address, not an interface name; .* such as 198.18.0.1\/32/],
    ['2001:db8::1', /such as 2001:db8::1\/128/],
    ['averyveryverylongname', /not an interface name \(at most 15 characters/],
    ['eth 0', /'eth 0' is not an interface name/],
    ['=eth0:1', /'=eth0:1' is not an interface name/],
  ])('rejects %j with one line', (text, message) => {
    let thrown: unknown;
    try {
      parseExcludeRule(text);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(Error);
    expect((thrown as Error).message).toMatch(message);
    expect((thrown as Error).message).not.toContain('\n');
  });
});

describe('buildExcludes', () => {
  it('puts the defaults first, then the user entries', () => {
    const rules = buildExcludes(['=eth1', '172.16.0.0/12'], false);
    expect(rules).toHaveLength(DEFAULT_EXCLUDES.length + 2);
    expect(rules[0]).toEqual({ kind: 'prefix', value: 'lo', byDefault: true });
    expect(rules.slice(-2).map(describeExclude)).toEqual(['=eth1', '172.16.0.0/12']);
  });

  it('a default the user names too is theirs (a VPN they exclude stays excluded)', () => {
    const rules = buildExcludes(['tailscale'], false);
    expect(rules.filter((rule) => describeExclude(rule) === 'prefix tailscale')).toEqual([
      { kind: 'prefix', value: 'tailscale' },
    ]);
  });

  it('drops the defaults on request', () => {
    expect(buildExcludes(['docker'], true)).toEqual([{ kind: 'prefix', value: 'docker' }]);
    expect(buildExcludes([], true)).toEqual([]);
  });

  it('keeps one copy of a repeated rule', () => {
    expect(buildExcludes(['docker', 'eth', 'eth'], false)).toHaveLength(
      DEFAULT_EXCLUDES.length + 1,
    );
  });

  it('throws on the first malformed entry', () => {
    expect(() => buildExcludes(['docker', '10.0.0.0/40'], false)).toThrow(/'10.0.0.0\/40'/);
  });
});

describe('excludedBy', () => {
  const defaults = buildExcludes([], false);
  it.each<[FixtureName, string, string[] | null, string | null]>([
    ['docker-host', 'docker0', null, 'prefix docker'],
    ['docker-host', 'br-3f9a1c2e7b44', null, 'prefix br-'],
    ['docker-host', 'veth1a2b3c4', null, 'prefix veth'],
    ['docker-host', 'lo', null, 'prefix lo'],
    ['docker-host', 'eno1', null, null],
    ['k8s-node', 'cni0', null, 'prefix cni'],
    ['k8s-node', 'flannel.1', null, 'prefix flannel'],
    ['k8s-node', 'kube-ipvs0', null, 'prefix kube-ipvs'],
    ['k8s-node', 'nodelocaldns', null, 'prefix nodelocaldns'],
    ['k8s-node', 'ens5', null, null],
    ['tailscale-host', 'tailscale0', null, 'prefix tailscale'],
    // A Multus pod's eth0 is a veth, but its name is not: kinds never exclude.
    ['multus-pod', 'eth0', null, null],
    ['bond-host', 'bond0', ['=bond0'], '=bond0'],
    ['bond-host', 'bond0.2973', ['=bond0'], null],
    ['bond-host', 'bond0.2973', ['bond0'], 'prefix bond0'],
    ['docker-host', 'eno1', ['198.18.4.0/24'], '198.18.4.0/24'],
    ['docker-host', 'docker0', ['172.16.0.0/12'], '172.16.0.0/12'],
    ['docker-host', 'eno1', ['172.16.0.0/12'], null],
    // A down port's stale address still places it in the block.
    ['bond-host', 'ens2f0', ['198.18.12.0/22'], '198.18.12.0/22'],
    ['ipv6-only', 'ens3', ['2001:db8:0:12::/64'], '2001:db8:0:12::/64'],
    ['ipv6-only', 'ens3', ['2001:db8:0:13::/64'], null],
    // Link-local addresses are never "the" address, so fe80::/10 excludes nothing.
    ['docker-host', 'veth1a2b3c4', ['fe80::/10'], null],
  ])('%s %s with %j → %s', (fixture, name, extra, expected) => {
    const iface = loadFacts(fixture).interfaces.find((i) => i.name === name);
    if (iface === undefined) throw new Error(`${fixture} has no ${name}`);
    const rules = extra === null ? defaults : buildExcludes(extra, true);
    const rule = excludedBy(iface, rules);
    expect(rule === null ? null : describeExclude(rule)).toBe(expected);
  });

  it('reports the first rule that matches', () => {
    const docker0 = loadFacts('docker-host').interfaces.find((i) => i.name === 'docker0');
    if (docker0 === undefined) throw new Error('docker-host has no docker0');
    const rules = buildExcludes(['172.17.0.0/16', '=docker0', 'dock'], true);
    expect(excludedBy(docker0, rules)).toEqual(rules[0]);
  });
});
