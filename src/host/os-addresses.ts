/**
 * Interface addresses as Node sees them (os.networkInterfaces(), i.e. libuv's
 * getifaddrs walk). libuv drops every interface that is not both IFF_UP and
 * IFF_RUNNING (uv__ifaddr_exclude in src/unix/linux.c), so a down interface or
 * one without carrier is missing here even when it holds addresses; the
 * reader completes the picture from `ip addr` (ip-links.ts) where it can.
 */
import type { NetworkInterfaceInfo } from 'node:os';
import type { InterfaceAddress } from './host-facts.js';
import { addressScope, familyOf } from './ip-address.js';

export type OsInterfaces = NodeJS.Dict<NetworkInterfaceInfo[]>;

export function addressesFromOs(osInterfaces: OsInterfaces): Map<string, InterfaceAddress[]> {
  const byName = new Map<string, InterfaceAddress[]>();
  for (const [name, infos] of Object.entries(osInterfaces)) {
    const addresses: InterfaceAddress[] = [];
    for (const info of infos ?? []) {
      const family = familyOf(info.address);
      // libuv leaves cidr null only for a non-contiguous netmask, which no prefix length can express.
      const prefixLength = info.cidr === null ? Number.NaN : Number(info.cidr.split('/')[1]);
      if (family === null || !Number.isInteger(prefixLength)) continue;
      addresses.push({
        address: info.address,
        family,
        prefixLength,
        scope: addressScope(info.address),
      });
    }
    byName.set(name, addresses);
  }
  return byName;
}
