/**
 * The scope of an interface address (SPEC "Usable": not loopback, not
 * link-local). Loopback is 127.0.0.0/8 and ::1 (RFC 1122, RFC 4291);
 * link-local is 169.254.0.0/16 (RFC 3927) and fe80::/10 (RFC 4291).
 */
import type { InterfaceAddress } from './host-facts.js';
import { isLinkLocalAddress, isLoopbackAddress } from './ip-address.js';

export function addressScope(address: string): InterfaceAddress['scope'] {
  if (isLoopbackAddress(address)) return 'host';
  if (isLinkLocalAddress(address)) return 'link';
  return 'global';
}
