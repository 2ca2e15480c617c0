/**
 * SPEC `explicit`: the user's own choice, never second-guessed by the exclude
 * list. --iface names candidates in order of preference; without it, a
 * NCCL_SOCKET_IFNAME the user already set is kept and read with NCCL's own
 * semantics (below). A named interface that cannot be used is fatal, never a
 * silent fall-through.
 */

import type { Family, HostFacts, InterfaceAddress, InterfaceFacts } from '../../host/host-facts.js';
import { isUp } from '../../host/link-state.js';
import { interfaceRules } from '../../nccl/behaviour.js';
import { ncclIfnameMatches, parseNcclIfname } from '../../nccl/nccl-ifname.js';
import { ncclPick, SOCKET_FAMILY, socketFamily } from '../../nccl/nccl-pick.js';
import { originText } from '../../origin.js';
import { predicate } from '../candidates.js';
import type { ResolveContext, Strategy, StrategyOutcome } from '../decision.js';
import { familyLabel } from '../ip-prefix.js';
import { loopbackRefusal } from '../loopback-address.js';
import { reachMaster } from '../reach-master.js';
import { type Unusable, unusable, unusableText, usableAddress } from '../usable.js';

export const explicit: Strategy = (facts, context) => {
  if (context.explicitInterfaces.length > 0) return fromIfaceOption(facts, context);
  if (context.userNcclIfname !== null)
    return fromNcclIfname(facts, context, context.userNcclIfname);
  // Also the case with --force, which replaces the user's NCCL_SOCKET_IFNAME instead of keeping it.
  return { outcome: 'skipped', reason: 'no --iface given and no NCCL_SOCKET_IFNAME to keep' };
};

function fromIfaceOption(facts: HostFacts, context: ResolveContext): StrategyOutcome {
  const names = context.explicitInterfaces;
  const given = originText(context.explicitOrigin);
  const failures: string[] = [];
  for (const name of names) {
    const iface = facts.interfaces.find((candidate) => candidate.name === name);
    const address = iface === undefined ? null : chosenAddress(iface, context.family);
    // SPEC: `--iface lo` in a multi-node job whose master is another host is 69.
    const loopback = iface?.kind === 'loopback' ? loopbackRefusal(facts, context, name) : null;
    if (address !== null && loopback !== null) {
      failures.push(`${name}: ${loopback}`);
      continue;
    }
    if (address !== null) {
      const first = names.length > 1 ? ` (first usable of ${names.join(',')})` : '';
      return {
        outcome: 'picked',
        interface: name,
        address: address.address,
        reason: `${given} ${name}${first}, ${familyLabel(context.family)} ${address.address}`,
      };
    }
    // chosenAddress finds none only on an interface that is unusable.
    const why = iface === undefined ? null : (unusable(iface, context.family) as Unusable);
    failures.push(`${name}: ${why === null ? 'does not exist' : unusableText(why)}`);
  }
  const subject =
    names.length > 1
      ? `none of ${given} ${names.join(',')} is usable`
      : `${given} ${names[0]} is not usable`;
  return { outcome: 'fatal', reason: `${subject} (${failures.join('; ')})` };
}

/**
 * A kept NCCL_SOCKET_IFNAME (SPEC `explicit`): NCCL walks its own way
 * (nccl-pick.ts); Gloo and TensorPipe need one name, and get the match that
 * reaches the master, else NCCL's own pick, so that at least the job's
 * processes agree.
 */
function fromNcclIfname(facts: HostFacts, context: ResolveContext, value: string): StrategyOutcome {
  const shown = `NCCL_SOCKET_IFNAME=${value}`;
  const parsed = parseNcclIfname(value);
  const matches = facts.interfaces.filter((iface) => ncclIfnameMatches(parsed, iface.name));
  if (matches.length === 0) {
    return {
      outcome: 'fatal',
      reason: `${shown} matches none of this host's interfaces (${listNames(facts.interfaces)})${syntaxHint(value)}`,
    };
  }
  const family = context.userNcclFamily ?? SOCKET_FAMILY[context.family];
  const settings = { ifname: value, family, commId: null };
  const own = ncclPick(facts, settings, context.ncclRules);
  if (own === null) {
    const why = matches.map((iface) => `${iface.name}: ${nothingTaken(iface, family, context)}`);
    return {
      outcome: 'fatal',
      reason: `${shown} matches no interface NCCL would take (${why.join('; ')}); NCCL will stop with "no socket interface found"; --force replaces it`,
    };
  }
  const binds = `NCCL binds ${own.interface} ${own.address}`;
  const reach = reachMaster(facts, context, (iface) => ncclIfnameMatches(parsed, iface.name));
  if (reach !== null) {
    const which =
      reach.interface === own.interface
        ? `${binds}, which reaches the master`
        : `${binds}; of its matches, ${reach.interface} reaches the master`;
    return { ...reach, reason: `${shown} is kept; ${which}: ${reach.reason}` };
  }
  // NCCL walked this same list (the value is honoured, no NCCL_COMM_ID), so its pick is a match.
  const ownIface = matches.find((iface) => iface.name === own.interface) as InterfaceFacts;
  const why = unusable(ownIface, context.family);
  const loopbackAlone = ownIface.kind === 'loopback' && context.singleNode;
  const noReach =
    context.master === null ? 'no master is known' : 'none of its matches reaches the master';
  if (why !== null && !loopbackAlone) {
    return {
      outcome: 'fatal',
      reason: `${shown} is kept, ${noReach}, and ${binds}, which ${predicate(why)}; --force replaces it`,
    };
  }
  return {
    outcome: 'picked',
    interface: own.interface,
    address: own.address,
    reason: `${shown} is kept; ${noReach}, so Gloo and TensorPipe follow NCCL: ${binds}`,
  };
}

/** `=^eth1` reads as the exact name "^eth1" (findInterfaces strips `^` only before `=`). */
function syntaxHint(value: string): string {
  if (!value.startsWith('=^')) return '';
  const names = value.slice(2);
  return `; NCCL takes '^' after '=' as part of the name, so to exclude ${names} write ^=${names}`;
}

/** Why NCCL takes no address of a matching interface. */
function nothingTaken(iface: InterfaceFacts, family: string, context: ResolveContext): string {
  if (interfaceRules(context.ncclRules).skipsNotRunning && !isUp(iface)) {
    return `not running (NCCL ${context.ncclRules} skips it)`;
  }
  const wanted = socketFamily(family);
  const taken = iface.addresses.filter((a) => wanted === null || a.family === wanted);
  if (taken.length === 0)
    return wanted === null ? 'no address' : `no ${familyLabel(wanted)} address (${family})`;
  return 'only ::1, which NCCL skips';
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
