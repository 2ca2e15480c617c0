/**
 * The scope of an interface address (SPEC "Usable": not loopback, not
 * link-local). Loopback is 127.0.0.0/8 and ::1 (RFC 1122, RFC 4291);
 * link-local is 169.254.0.0/16 (RFC 3927) and fe80::/10 (RFC 4291).
 */
import { BlockList } from 'node:net';
import type { Family, InterfaceAddress } from './host-facts.js';
import { withoutZone } from './ip-address.js';

const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');

const linkLocal = new BlockList();
linkLocal.addSubnet('169.254.0.0', 16, 'ipv4');
linkLocal.addSubnet('fe80::', 10, 'ipv6');

export function addressScope(address: string, family: Family): InterfaceAddress['scope'] {
  const bare = withoutZone(address);
  if (loopback.check(bare, family)) return 'host';
  if (linkLocal.check(bare, family)) return 'link';
  return 'global';
}
