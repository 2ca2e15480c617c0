/**
 * A user's NCCL_SOCKET_FAMILY that nccl-run keeps. NCCL (src/misc/socket.cc
 * ncclEnvSocketFamily) strcmp()s it against exactly "AF_INET" and "AF_INET6"
 * and silently ignores anything else; a valid one that differs from the
 * chosen family makes NCCL look for an address the chosen interface may not have.
 */
import type { Family } from '../host/host-facts.js';
import { SOCKET_FAMILY } from '../resolve/nccl-pick.js';

export { SOCKET_FAMILY };

export function socketFamilyWarning(
  kept: string,
  chosen: { interface: string; address: string; family: Family },
): string | null {
  const wanted = SOCKET_FAMILY[chosen.family];
  if (kept === wanted) return null;
  if (kept !== SOCKET_FAMILY.ipv4 && kept !== SOCKET_FAMILY.ipv6) {
    return `NCCL_SOCKET_FAMILY='${kept}' (yours, kept) is neither AF_INET nor AF_INET6, so NCCL ignores it; the chosen ${chosen.interface} ${chosen.address} wants ${wanted}`;
  }
  return `NCCL_SOCKET_FAMILY=${kept} (yours, kept) but the chosen ${chosen.interface} ${chosen.address} is ${chosen.family === 'ipv4' ? 'IPv4' : 'IPv6'}; NCCL will look for an ${kept === 'AF_INET' ? 'IPv4' : 'IPv6'} address; --force sets ${wanted}`;
}
