/**
 * SPEC --exclude: name prefixes (docker), exact names (=eth1) and CIDR blocks
 * (172.16.0.0/12), added to the default list unless --no-default-excludes.
 */
import { isIP } from 'node:net';
import type { InterfaceFacts } from '../host/host-facts.js';
import { familyOf, prefixContains } from '../host/ip-address.js';
import type { ExcludeRule } from './decision.js';
import { networkOf } from './ip-prefix.js';
import { isRoutableAddress } from './usable.js';

/** SPEC "Default excludes". */
export const DEFAULT_EXCLUDES = [
  'lo',
  'docker',
  'veth',
  'virbr',
  'br-',
  'cni',
  'flannel',
  'cali',
  'tunl',
  'tun',
  'tap',
  'wg',
  'tailscale',
  'zt',
  'kube-ipvs',
  'vxlan',
  'weave',
  'cilium',
  'lxc',
  'podman',
  'nodelocaldns',
] as const;

/** Linux IFNAMSIZ is 16 with the terminating NUL (dev_valid_name). */
const MAX_IFNAME = 15;

/**
 * Parses one --exclude entry; throws a plain Error with a one-line reason when
 * malformed. A CIDR block with host bits set (198.18.0.7/24) is rejected, as
 * Python's ipaddress.ip_network does by default: it is most often a typo for
 * an address or a shorter prefix, and the message names the block meant.
 */
export function parseExcludeRule(text: string): ExcludeRule {
  const entry = text.trim();
  if (entry === '')
    throw new Error('empty exclude entry; give a name prefix, =NAME or a CIDR block');
  if (entry.startsWith('=')) {
    return { kind: 'exact', value: checkedName(entry.slice(1), entry) };
  }
  if (entry.includes('/')) return parseCidr(entry);
  if (isIP(entry) !== 0) {
    const bits = isIP(entry) === 4 ? 32 : 128;
    throw new Error(
      `'${entry}' is an address, not an interface name; to exclude it give a CIDR block such as ${entry}/${bits}`,
    );
  }
  return { kind: 'prefix', value: checkedName(entry, entry) };
}

function checkedName(name: string, entry: string): string {
  if (name === '') throw new Error(`'${entry}' names no interface; write =NAME, e.g. =eth1`);
  if (name.length > MAX_IFNAME || /[\s/:]/.test(name)) {
    throw new Error(
      `'${entry}' is not an interface name (at most ${MAX_IFNAME} characters, no spaces, '/' or ':'); give a name prefix, =NAME or a CIDR block`,
    );
  }
  return name;
}

function parseCidr(entry: string): ExcludeRule {
  const [address = '', prefix = ''] = entry.split('/', 2);
  const family = familyOf(address);
  if (family === null || entry.split('/').length !== 2) {
    throw new Error(
      `'${entry}' is not a CIDR block; expected ADDRESS/PREFIX such as 172.16.0.0/12 or 2001:db8::/32`,
    );
  }
  const max = family === 'ipv4' ? 32 : 128;
  if (!/^\d{1,3}$/.test(prefix) || Number(prefix) > max) {
    throw new Error(
      `'${entry}': prefix length '${prefix}' must be 0-${max} for ${family === 'ipv4' ? 'IPv4' : 'IPv6'}`,
    );
  }
  const prefixLength = Number(prefix);
  const network = networkOf(address, prefixLength);
  const given = networkOf(address, max);
  if (network !== given) {
    throw new Error(
      `'${entry}' has host bits set; did you mean ${network}/${prefixLength} (or ${given}/${max} for the one address)?`,
    );
  }
  return { kind: 'cidr', network, prefixLength, family };
}

/** The defaults (unless noDefaults) followed by the user's entries, duplicates dropped. */
export function buildExcludes(raw: string[], noDefaults: boolean): ExcludeRule[] {
  const named = raw.map(parseExcludeRule);
  const userKeys = new Set(named.map(describeExclude));
  // A default the user names too is theirs: a VPN it excludes stays excluded (candidates.ts).
  const defaults: ExcludeRule[] = noDefaults
    ? []
    : DEFAULT_EXCLUDES.map((value) =>
        userKeys.has(`prefix ${value}`)
          ? { kind: 'prefix', value }
          : { kind: 'prefix', value, byDefault: true },
      );
  const rules = [...defaults, ...named];
  const seen = new Set<string>();
  return rules.filter((rule) => {
    const key = describeExclude(rule);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * The first rule that excludes the interface. A CIDR rule matches an
 * interface holding a routable address of the rule's family inside the block,
 * whether or not the link is up, so the verdict stays "excluded" either way.
 */
export function excludedBy(
  iface: InterfaceFacts,
  rules: readonly ExcludeRule[],
): ExcludeRule | null {
  for (const rule of rules) {
    if (rule.kind === 'prefix' && iface.name.startsWith(rule.value)) return rule;
    if ((rule.kind === 'exact' || rule.kind === 'plugin') && iface.name === rule.value) return rule;
    if (
      rule.kind === 'cidr' &&
      iface.addresses.some(
        (a) =>
          a.family === rule.family &&
          isRoutableAddress(a) &&
          prefixContains(rule.network, rule.prefixLength, a.address),
      )
    ) {
      return rule;
    }
  }
  return null;
}

/** How a rule reads in a reason or verdict: "prefix docker", "=eth1", "172.16.0.0/12". */
export function describeExclude(rule: ExcludeRule): string {
  if (rule.kind === 'prefix') return `prefix ${rule.value}`;
  if (rule.kind === 'exact') return `=${rule.value}`;
  if (rule.kind === 'plugin') return `a GPU NIC of ${rule.plugin}`;
  return `${rule.network}/${rule.prefixLength}`;
}
