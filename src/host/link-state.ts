import type { InterfaceFacts } from './host-facts.js';

/**
 * NCCL only takes interfaces with IFF_RUNNING (socket.cc findInterfaces), which
 * the kernel sets for an admin-up link whose operstate is UP or UNKNOWN
 * (netif_oper_up). Loopback, bridges and many virtual links report "unknown"
 * for ever, so "unknown" counts as up unless the carrier says there is no link.
 * A snapshot without operstate falls back to the carrier alone.
 */
export function isUp(iface: InterfaceFacts): boolean {
  if (iface.operstate === 'up') return true;
  if (iface.operstate === 'unknown') return iface.carrier !== false;
  return iface.operstate === null && iface.carrier === true;
}

/** Why the link is not up, e.g. "down", "down (no carrier)", "down (operstate lowerlayerdown)". */
export function downReason(iface: InterfaceFacts): string {
  if (iface.operstate === 'down') return iface.carrier === false ? 'down (no carrier)' : 'down';
  if (iface.operstate === 'unknown' || iface.operstate === null) return 'down (no carrier)';
  return `down (operstate ${iface.operstate})`;
}
