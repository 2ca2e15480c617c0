/**
 * SPEC "Causes users meet": a VPN (tailscale, wg, zt, tun, tap) through which
 * the master is reached is the job's network, chosen, with a warning: NCCL's
 * and Gloo's traffic then runs at the tunnel's bandwidth and MTU (tailscale's
 * 1280, WireGuard's 1420), encrypted by the CPU.
 */
import type { HostFacts } from '../host/host-facts.js';
import { vpnPrefix } from '../resolve/candidates.js';
import type { Decision, ResolveContext } from '../resolve/decision.js';

export function vpnWarning(
  facts: HostFacts,
  decision: Decision,
  context: ResolveContext,
): string | null {
  const prefix = vpnPrefix(decision.interface, context);
  if (prefix === null || decision.strategy === 'explicit') return null;
  const iface = facts.interfaces.find((candidate) => candidate.name === decision.interface);
  const mtu = iface?.mtu == null ? '' : `, MTU ${iface.mtu}`;
  return `${decision.interface} is a VPN tunnel (prefix ${prefix}, excluded by default), and the master is reached through it, so nccl-run chose it: NCCL's and Gloo's traffic runs at the tunnel's bandwidth${mtu}; give the nodes a network of their own for training, --iface ${decision.interface} to say it is meant, or --exclude ${prefix} to refuse it`;
}
