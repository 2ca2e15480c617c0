/**
 * SPEC "Warnings": a multi-node job whose hostname resolves to loopback with
 * no Gloo interface set. Without GLOO_SOCKET_IFNAME, Gloo
 * (gloo/transport/tcp/device.cc lookupAddrForHostname) calls getaddrinfo on
 * gethostname() and binds the first address that bind(2) accepts; Debian and
 * Ubuntu map the hostname to 127.0.1.1 in /etc/hosts, so every rank listens
 * on loopback and the peers on other nodes can never connect.
 */
import { lookup } from 'node:dns/promises';
import { BlockList } from 'node:net';
import type { HostFacts } from '../host/host-facts.js';
import type { JobShape } from '../job/job-shape.js';

const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');

export async function hostnameLoopbackWarning(
  job: JobShape,
  glooIfname: string | null,
  facts: HostFacts,
): Promise<string | null> {
  if (glooIfname !== null || job.standalone || job.nnodes.max <= 1) return null;
  let addresses: string[];
  try {
    // dns.lookup goes through getaddrinfo and /etc/hosts, as Gloo does, in the resolver's order.
    addresses = (await lookup(facts.hostname, { all: true })).map((entry) => entry.address);
  } catch {
    // A hostname that does not resolve makes Gloo fail loudly, not bind to loopback.
    return null;
  }
  const own = new Set(facts.interfaces.flatMap((iface) => iface.addresses.map((a) => a.address)));
  const bound = addresses.find((address) => isLoopback(address) || own.has(address));
  if (bound === undefined || !isLoopback(bound)) return null;
  return `hostname ${facts.hostname} resolves to ${bound} (loopback) and GLOO_SOCKET_IFNAME is not set: Gloo would listen on loopback and the other ${job.nnodes.max - 1} node(s) could not connect`;
}

function isLoopback(address: string): boolean {
  return loopback.check(address, address.includes(':') ? 'ipv6' : 'ipv4');
}
