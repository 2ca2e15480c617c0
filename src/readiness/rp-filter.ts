/**
 * Strict reverse-path filtering on a multi-homed host. The kernel drops a
 * packet arriving on an interface when the route back to its source leaves
 * by another one and the interface's rp_filter is strict (1); it filters by
 * the larger of net.ipv4.conf.all.rp_filter and the interface's own
 * (Documentation/networking/ip-sysctl.rst: "The max value from conf/{all,
 * interface}/rp_filter is used"); 2 (loose) only asks for a route at all.
 * IPv4 only: IPv6 has no such sysctl. A host with one network cannot route
 * back elsewhere; on a multi-homed one, a known peer address whose route
 * leaves by another interface than the chosen one is a silent drop of what
 * that peer sends to the chosen address: a warning naming it.
 */
import type { CheckInput } from './check-input.js';
import { mayFail, passed, type Verdict } from './finding.js';
import { type FixByContext, fixFor } from './user-context.js';

export function checkRpFilter({ needs, node }: CheckInput): Verdict {
  if (needs.network === null || node.network === null) return passed('no interface was chosen');
  if (needs.network.family === 'ipv6')
    return passed('IPv6: the kernel has no reverse-path filter sysctl for it');
  const { interface: iface, rpFilter } = node.network;
  if (rpFilter.all === null && rpFilter.interface === null)
    return passed(`rp_filter could not be read (/proc/sys/net/ipv4/conf/{all,${iface}}/rp_filter)`);
  const value = Math.max(rpFilter.all ?? 0, rpFilter.interface ?? 0);
  const read = `rp_filter ${value} on ${iface} (the larger of all=${rpFilter.all ?? '?'} and ${iface}=${rpFilter.interface ?? '?'})`;
  if (value !== 1)
    return passed(`${read}: ${value === 0 ? 'off' : 'loose, any route back will do'}`);
  const others = needs.network.otherInterfaces;
  if (others.length === 0)
    return passed(`${read}: strict, on a host whose only network is ${iface}`);
  const elsewhere = needs.network.routesBack.filter((route) => route.interface !== iface);
  if (elsewhere.length === 0)
    return passed(
      `${read}: strict on a host also on ${others.join(', ')}; the routes back to ${needs.network.routesBack.map((route) => route.address).join(', ') || 'the known peers'} leave by ${iface}`,
    );
  return mayFail(
    `${read}: strict on a host also on ${others.join(', ')}, and the route back to ${elsewhere.map((route) => `${route.address} leaves by ${route.interface ?? 'no interface (no route)'}`).join(', ')}: the kernel drops what arrives from there on ${iface}, silently`,
    fixFor(node.contexts, rpFixes(iface)),
  );
}

function rpFixes(iface: string): FixByContext {
  const names = [`net.ipv4.conf.all.rp_filter=2`, `net.ipv4.conf.${iface}.rp_filter=2`];
  const loose = `loose filtering (2), or a route to the peers' network by ${iface}`;
  const flags = names.map((name) => `--sysctl ${name}`).join(' ');
  return {
    docker: `${loose}: docker run ${flags} (compose: sysctls; with --network host, sysctl on the host)`,
    podman: `${loose}: podman run ${flags}`,
    kubernetes: `${loose}: securityContext.sysctls ${names.join(', ')} (an unsafe sysctl, which the kubelet must allow with --allowed-unsafe-sysctls)`,
    slurm: `${loose}: sysctl -w ${names.join(' ')} on the nodes (as root)`,
    host: `${loose}: sysctl -w ${names.join(' ')} (as root)`,
  };
}
