import { isIPv6 } from 'node:net';
import type { Family } from '../host/host-facts.js';

/** SPEC --family: auto follows the master's (first) address, else IPv4. */
export function settleFamily(option: 'auto' | Family, masterAddresses: readonly string[]): Family {
  if (option !== 'auto') return option;
  const first = masterAddresses[0];
  return first !== undefined && isIPv6(first) ? 'ipv6' : 'ipv4';
}
