/**
 * SPEC `explicit`: the user's own choice, never second-guessed by the exclude
 * list. --iface names candidates in order of preference; without it, a
 * NCCL_SOCKET_IFNAME the user already set is kept and read with NCCL's own
 * semantics, and its first usable match is what Gloo and TensorPipe get.
 * A named interface that cannot be used is fatal, never a silent fall-through.
 */
import type { Family, HostFacts, InterfaceAddress, InterfaceFacts } from '../../host/host-facts.js';
import type { ResolveContext, Strategy, StrategyOutcome } from '../decision.js';
import { familyLabel } from '../ip-prefix.js';
import { ncclHonoursIfname, ncclIfnameMatches, parseNcclIfname } from '../nccl-ifname.js';
import { isUp, unusableReason, usableAddress } from '../usable.js';

export const explicit: Strategy = (facts, context) => {
  if (context.explicitInterfaces.length > 0) return fromIfaceOption(facts, context);
  if (context.userNcclIfname !== null)
    return fromNcclIfname(facts, context, context.userNcclIfname);
  // Also the case with --force, which replaces the user's NCCL_SOCKET_IFNAME instead of keeping it.
  return { outcome: 'skipped', reason: 'no --iface given and no NCCL_SOCKET_IFNAME to keep' };
};

function fromIfaceOption(facts: HostFacts, context: ResolveContext): StrategyOutcome {
  const names = context.explicitInterfaces;
  const failures: string[] = [];
  for (const name of names) {
    const iface = facts.interfaces.find((candidate) => candidate.name === name);
    const address = iface === undefined ? null : chosenAddress(iface, context.family);
    if (address !== null) {
      const first = names.length > 1 ? ` (first usable of ${names.join(',')})` : '';
      return {
        outcome: 'picked',
        interface: name,
        address: address.address,
        reason: `--iface ${name}${first}, ${familyLabel(context.family)} ${address.address}`,
      };
    }
    failures.push(
      `${name}: ${iface === undefined ? 'does not exist' : unusableReason(iface, context.family)}`,
    );
  }
  const subject =
    names.length > 1
      ? `none of --iface ${names.join(',')} is usable`
      : `--iface ${names[0]} is not usable`;
  return { outcome: 'fatal', reason: `${subject} (${failures.join('; ')})` };
}

function fromNcclIfname(facts: HostFacts, context: ResolveContext, value: string): StrategyOutcome {
  const shown = `NCCL_SOCKET_IFNAME=${value}`;
  if (!ncclHonoursIfname(value)) {
    return {
      outcome: 'skipped',
      reason: `${shown} is ignored by NCCL (values shorter than two characters are)`,
    };
  }
  const parsed = parseNcclIfname(value);
  // NCCL walks the interfaces in the kernel's order and keeps every match; Gloo needs one.
  const matches = facts.interfaces.filter((iface) => ncclIfnameMatches(parsed, iface.name));
  const usable = matches.find((iface) => unusableReason(iface, context.family) === null);
  const address = usable === undefined ? null : usableAddress(usable, context.family);
  if (usable !== undefined && address !== null) {
    return {
      outcome: 'picked',
      interface: usable.name,
      address: address.address,
      reason: `${shown} is kept; ${usable.name} is its first usable match, ${familyLabel(context.family)} ${address.address}`,
    };
  }
  if (matches.length === 0) {
    return {
      outcome: 'fatal',
      reason: `${shown} matches none of this host's interfaces (${listNames(facts.interfaces)})`,
    };
  }
  const why = matches.map((iface) => `${iface.name}: ${unusableReason(iface, context.family)}`);
  return { outcome: 'fatal', reason: `${shown} matches no usable interface (${why.join('; ')})` };
}

/**
 * A usable address; or, since the user named it with --iface, loopback's own address: the
 * one way to pin a single-node debugging run to lo (other strategies never
 * pick it for a multi-node job, and the verification catches a wrong use).
 */
function chosenAddress(iface: InterfaceFacts, family: Family): InterfaceAddress | null {
  if (iface.kind === 'loopback' && isUp(iface)) {
    return iface.addresses.find((a) => a.family === family) ?? null;
  }
  return usableAddress(iface, family);
}

function listNames(interfaces: readonly InterfaceFacts[]): string {
  const names = interfaces.map((iface) => iface.name);
  return names.length > 12
    ? `${names.slice(0, 12).join(', ')}, and ${names.length - 12} more`
    : names.join(', ');
}
