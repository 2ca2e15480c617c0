/**
 * GLOO_SOCKET_IFNAME as torch and Gloo read it, and what is wrong with a
 * user's value (SPEC "What it exports": errors and warnings).
 *
 * torch/csrc/distributed/c10d/init.cpp splits the value on ',' with
 * std::getline and makes one Gloo device per piece; gloo/transport/tcp/device.cc
 * (lookupAddrForIface) then strcmp()s each piece against the names from
 * getifaddrs() and throws "Unable to find address for: PIECE" when none is
 * equal. So there is no prefix match, no `^` exclude, no `=`, no address: only
 * exact interface names. An empty piece never reaches the hostname path:
 * GlooDeviceFactory's makeTCPDevice gets neither a name nor a hostname and
 * refuses it ("interface or hostname can't be empty"), in 1.13 and 2.6 alike.
 * lookupAddrForIface takes the interface's first address (IPv4 before IPv6)
 * whatever the link's state, so Gloo binds a down link, lo, or an IPv6
 * link-local address, and fails only when a peer connects to it. Of a pair,
 * the side whose address is greater connects (tcp/pair.cc Pair::connect,
 * memcmp of the addresses; the Gloo oracle sees the same in 1.13 and 2.6).
 */
import { isIP } from 'node:net';
import { ConfigError } from '../errors.js';
import type { HostFacts } from '../host/host-facts.js';
import { familyOf, isLinkLocalAddress, isLoopbackAddress } from '../host/ip-address.js';
import { isUp } from '../host/link-state.js';
import { parseNcclIfname } from '../nccl/nccl-ifname.js';
import { type Origin, whereSet } from '../origin.js';
import { glooInterfaceAddress, glooInterfaceNames } from '../resolve/gloo-pick.js';

export interface GlooCheckContext {
  /** The NCCL_SOCKET_IFNAME the job will run with (the user's, kept, or nccl-run's). */
  ncclIfname: string;
  /** The interface nccl-run chose, offered as the valid alternative. */
  chosen: string;
  facts: HostFacts;
  /** Where the value came from: the environment, the env file, ... */
  from: Origin;
  /** Whether other nodes take part: then an interface they cannot reach certainly fails. */
  multiNode: boolean;
}

/**
 * A user's GLOO_SOCKET_IFNAME (or TP_SOCKET_IFNAME, which TensorPipe looks up
 * the same way) that nccl-run keeps. One that Gloo will certainly reject on
 * this host (NCCL's ^/= syntax, an address, a name this host lacks or that
 * holds no address, an empty entry) is a ConfigError, exit 78 (SPEC "What it
 * exports"): Gloo would stop with "Unable to find address for" only after
 * torchrun has spawned every worker. So is, in a multi-node job, one that
 * Gloo binds but no peer can reach (loopback, IPv6 link-local). What may
 * still work is a warning that says why: a down link fails only the peers
 * that must connect to it, and a node whose address is the greatest
 * connects to every peer itself (measured: a 2-node job works so).
 */
export function checkGlooIfname(
  variable: 'GLOO_SOCKET_IFNAME' | 'TP_SOCKET_IFNAME',
  value: string,
  context: GlooCheckContext,
): string[] {
  // TensorPipe (tensorpipe_agent.cpp) hands the whole value to
  // lookupAddrForIface as one name; only torch's Gloo binding splits on ','.
  const names = variable === 'TP_SOCKET_IFNAME' ? [value] : glooInterfaceNames(value);
  const said = `${variable}='${value}' (set in ${whereSet(context.from)})`;
  const fix = `use ${variable}=${context.chosen}, or --force to let nccl-run replace it`;
  const address = names.find(isAddress);
  if (address !== undefined) {
    throw new ConfigError(
      `${said} holds the address ${address}; it takes interface names only (comma-separated, no ^ or =): ${fix}`,
    );
  }
  const ncclSyntax = names.filter((name) => name.startsWith('^') || name.startsWith('='));
  if (ncclSyntax.length > 0) {
    throw new ConfigError(
      `${said} uses NCCL's ^/= syntax (${ncclSyntax.join(', ')}), which it reads as part of a name and fails with "Unable to find address for: ${ncclSyntax[0]}": ${fix}`,
    );
  }
  const missing = missingInterface(names, context.facts);
  if (missing !== null) {
    throw new ConfigError(
      `${said} ${missing}; it will fail with "Unable to find address for": ${fix}`,
    );
  }
  if (variable === 'GLOO_SOCKET_IFNAME' && names.includes('')) {
    throw new ConfigError(
      `${said} has an empty entry, which torch refuses when it makes Gloo's devices ("interface or hostname can't be empty"): ${fix}`,
    );
  }
  const warnings: string[] = [];
  for (const name of context.multiNode ? names : []) {
    const unreachable = unreachableFromPeers(name, context.facts);
    if (unreachable?.certain === true) {
      throw new ConfigError(
        `${said} names ${name}, ${unreachable.why}; in a multi-node job the other nodes cannot reach it: ${fix}`,
      );
    }
    if (unreachable !== null) warnings.push(`${said} names ${name}, ${unreachable.why}`);
  }
  const nccl = parseNcclIfname(context.ncclIfname);
  if (names.length > 1 && nccl.mode === 'include' && nccl.names.length !== names.length) {
    warnings.push(
      `${said} lists ${names.length} interfaces but NCCL_SOCKET_IFNAME='${context.ncclIfname}' lists ${nccl.names.length}; Gloo and NCCL will not use the same interfaces`,
    );
  }
  return warnings;
}

/**
 * Why peers cannot reach what Gloo binds on `name`: certain for a loopback
 * address (a peer connects to its own) or an IPv6 link-local one (Gloo sends
 * its scope id, which means nothing on the peer; an IPv4 peer meets "address
 * family mismatch"); only possible for a link that is down (only the peers
 * that connect to it fail) and an IPv4 link-local address (169.254/16 needs
 * no scope, so peers on the same link reach it).
 */
function unreachableFromPeers(
  name: string,
  facts: HostFacts,
): { certain: boolean; why: string } | null {
  const iface = facts.interfaces.find((candidate) => candidate.name === name);
  const address = glooInterfaceAddress(facts, name)?.address ?? null;
  if (iface === undefined || address === null) return null;
  if (!isUp(iface)) {
    const state = iface.operstate ?? 'unknown';
    const why = state === 'down' || iface.carrier !== false ? state : `${state}, no carrier`;
    return {
      certain: false,
      why: `which is down (${why}): Gloo binds ${address} there, and every peer that connects to this node (of a pair, the side with the greater address connects) cannot reach it`,
    };
  }
  if (iface.kind === 'loopback' || isLoopbackAddress(address)) {
    return { certain: true, why: `whose address Gloo binds, ${address}, is loopback` };
  }
  if (isLinkLocalAddress(address)) {
    return familyOf(address) === 'ipv6'
      ? {
          certain: true,
          why: `whose address Gloo binds, ${address}, is IPv6 link-local: the peers get its scope id, which means nothing on their hosts`,
        }
      : {
          certain: false,
          why: `whose address Gloo binds, ${address}, is IPv4 link-local: only nodes on this same link can reach it`,
        };
  }
  return null;
}

/** An IP address in any spelling a user might paste: plain, [v6], with a zone or a prefix length. */
function isAddress(piece: string): boolean {
  const bare = piece
    .trim()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\/\d+$/, '')
    .replace(/%.*$/, '');
  return isIP(bare) !== 0;
}

/** Why the first piece that Gloo cannot open here fails, or null. */
function missingInterface(names: string[], facts: HostFacts): string | null {
  for (const name of names) {
    if (name === '') continue;
    const iface = facts.interfaces.find((candidate) => candidate.name === name);
    if (iface === undefined) return `names ${name}, which this host does not have`;
    if (iface.addresses.length === 0) return `names ${name}, which has no IP address`;
  }
  return null;
}
