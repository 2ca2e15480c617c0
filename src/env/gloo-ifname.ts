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

export interface GlooCheckContext {
  /** The NCCL_SOCKET_IFNAME the job will run with (the user's, kept, or nccl-run's). */
  ncclIfname: string;
  /** The interface nccl-run chose, offered as the valid alternative. */
  chosen: string;
  facts: HostFacts;
  /** Where the value came from ("the environment", "the env file", ...). */
  from: string;
}

/**
 * A user's GLOO_SOCKET_IFNAME (or TP_SOCKET_IFNAME, which TensorPipe looks up
 * the same way) that nccl-run keeps. One that Gloo will certainly reject on
 * this host (NCCL's ^/= syntax, an address, a name this host lacks or that
 * holds no address) is a ConfigError, exit 78 (SPEC "What it exports"):
 * Gloo would stop with "Unable to find address for" only after torchrun has
 * spawned every worker. What may still work is a warning.
 */
export function checkGlooIfname(
  variable: 'GLOO_SOCKET_IFNAME' | 'TP_SOCKET_IFNAME',
  value: string,
  context: GlooCheckContext,
): string[] {
  // TensorPipe (tensorpipe_agent.cpp) hands the whole value to
  // lookupAddrForIface as one name; only torch's Gloo binding splits on ','.
  const names = variable === 'TP_SOCKET_IFNAME' ? [value] : glooInterfaceNames(value);
  const said = `${variable}='${value}' (set in ${context.from})`;
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
  const warnings: string[] = [];
  if (names.includes('')) {
    warnings.push(
      `${said} has an empty entry; for it Gloo binds to whatever this host's hostname resolves to`,
    );
  }
  const nccl = parseNcclIfname(context.ncclIfname);
  if (names.length > 1 && nccl.mode === 'include' && nccl.names.length !== names.length) {
    warnings.push(
      `${said} lists ${names.length} interfaces but NCCL_SOCKET_IFNAME='${context.ncclIfname}' lists ${nccl.names.length}; Gloo and NCCL will not use the same interfaces`,
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
