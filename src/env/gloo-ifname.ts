/**
 * GLOO_SOCKET_IFNAME as torch and Gloo read it, and what is wrong with a
 * user's value (SPEC "Warnings").
 *
 * torch/csrc/distributed/c10d/init.cpp splits the value on ',' with
 * std::getline and makes one Gloo device per piece; gloo/transport/tcp/device.cc
 * (lookupAddrForIface) then strcmp()s each piece against the names from
 * getifaddrs() and throws "Unable to find address for: PIECE" when none is
 * equal. So there is no prefix match, no `^` exclude, no `=`, no address: only
 * exact interface names. An empty piece takes the hostname path instead
 * (CreateDeviceAttr: `iface.size() > 0` else hostname).
 */
import { isIP } from 'node:net';
import { ConfigError } from '../errors.js';
import type { HostFacts } from '../host/host-facts.js';
import { parseNcclIfname } from '../resolve/nccl-ifname.js';

/** The pieces torch hands to Gloo: std::getline drops only a trailing empty piece. */
export function glooInterfaceNames(value: string): string[] {
  const pieces = value.split(',');
  if (pieces.at(-1) === '') pieces.pop();
  return pieces;
}

/** Whether a value uses NCCL's `^` exclude or `=` exact syntax, which Gloo reads as part of a name. */
export function usesNcclSyntax(value: string): boolean {
  return glooInterfaceNames(value).some((name) => name.startsWith('^') || name.startsWith('='));
}

export interface GlooCheckContext {
  /** The NCCL_SOCKET_IFNAME the job will run with (the user's, kept, or nccl-run's). */
  ncclIfname: string;
  /** The interface nccl-run chose, offered as the valid alternative. */
  chosen: string;
  facts: HostFacts;
}

/**
 * Warnings about a user's GLOO_SOCKET_IFNAME that nccl-run keeps. An address
 * is a ConfigError (exit 78): Gloo would stop at start-up with "Unable to find
 * address for", after torchrun has already spawned every worker.
 */
export function checkGlooIfname(value: string, context: GlooCheckContext): string[] {
  const names = glooInterfaceNames(value);
  const address = names.find(isAddress);
  if (address !== undefined) {
    throw new ConfigError(
      `GLOO_SOCKET_IFNAME='${value}' holds the address ${address}; Gloo takes interface names only, e.g. GLOO_SOCKET_IFNAME=${context.chosen} (several: comma-separated, no ^ or =)`,
    );
  }
  const warnings: string[] = [];
  const ncclSyntax = names.filter((name) => name.startsWith('^') || name.startsWith('='));
  if (ncclSyntax.length > 0) {
    warnings.push(
      `GLOO_SOCKET_IFNAME='${value}' uses NCCL's ^/= syntax (${ncclSyntax.join(', ')}); Gloo takes exact interface names only and will fail with "Unable to find address for: ${ncclSyntax[0]}"; use GLOO_SOCKET_IFNAME=${context.chosen}`,
    );
  }
  for (const problem of missingInterfaces(names, context.facts)) {
    warnings.push(`GLOO_SOCKET_IFNAME='${value}' ${problem}`);
  }
  const nccl = parseNcclIfname(context.ncclIfname);
  // A value in NCCL's syntax was not meant as a list of Gloo devices: its length says nothing.
  const comparable = ncclSyntax.length === 0 && names.length > 1;
  if (comparable && nccl.mode === 'include' && nccl.names.length !== names.length) {
    warnings.push(
      `GLOO_SOCKET_IFNAME='${value}' lists ${names.length} interfaces but NCCL_SOCKET_IFNAME='${context.ncclIfname}' lists ${nccl.names.length}; Gloo and NCCL will not use the same interfaces`,
    );
  }
  return warnings;
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

/** Pieces Gloo cannot open here; names with NCCL syntax are reported once, above. */
function missingInterfaces(names: string[], facts: HostFacts): string[] {
  const problems: string[] = [];
  for (const name of names) {
    if (name.startsWith('^') || name.startsWith('=')) continue;
    if (name === '') {
      problems.push(
        `has an empty entry; for it Gloo binds to whatever this host's hostname resolves to`,
      );
      continue;
    }
    const iface = facts.interfaces.find((candidate) => candidate.name === name);
    if (iface === undefined) {
      problems.push(
        `names ${name}, which this host does not have; Gloo will fail with "Unable to find address for: ${name}"`,
      );
    } else if (iface.addresses.length === 0) {
      problems.push(
        `names ${name}, which has no IP address; Gloo will fail with "Unable to find address for: ${name}"`,
      );
    }
  }
  return problems;
}
