/**
 * `init TEMPLATE --port-range LOW-HIGH` (SPEC "Cluster fill-in", templates):
 * NCCL's bootstrap and socket transport, and Gloo, listen on ephemeral ports
 * (bind to port 0), which the kernel draws from net.ipv4.ip_local_port_range.
 * A firewall that opens only a range between the nodes needs the job's
 * ephemeral ports inside it (NVIDIA/nccl #388, #1956: NCCL reads no
 * NCCL_PORT_RANGE). The sysctl is per network namespace and one of
 * Kubernetes' safe sysctls, so a pod (securityContext.sysctls), a compose
 * service (sysctls:) or `docker run --sysctl` sets it for its own namespace.
 * Each template carries the setting commented out with the kernel's default
 * range; this switches it on with the range asked for.
 */
import { UsageError } from '../errors.js';
import type { TemplateName } from './shipped-files.js';

export interface PortRange {
  low: number;
  high: number;
}

/**
 * The kernel refuses a range whose low end lies below
 * net.ipv4.ip_unprivileged_port_start (1024 by default) or above its high
 * end (net/ipv4/sysctl_net_ipv4.c ipv4_local_port_range).
 */
const LOWEST = 1024;
const HIGHEST = 65_535;

export function parsePortRange(text: string): PortRange {
  const valid = `LOW-HIGH with ${LOWEST} <= LOW <= HIGH <= ${HIGHEST}, e.g. 50000-51000`;
  const match = /^\s*(\d{1,5})\s*-\s*(\d{1,5})\s*$/.exec(text);
  if (match === null) throw new UsageError(`--port-range ${text}: expected ${valid}`);
  const low = Number(match[1]);
  const high = Number(match[2]);
  const problem =
    low < LOWEST
      ? `LOW ${low} is below ${LOWEST}`
      : high > HIGHEST
        ? `HIGH ${high} is above ${HIGHEST}`
        : low > high
          ? `LOW ${low} is above HIGH ${high}`
          : null;
  if (problem !== null) throw new UsageError(`--port-range ${text}: ${problem}; expected ${valid}`);
  return { low, high };
}

/** The commented settings, as the templates carry them (the kernel's default range). */
const POD_SYSCTL =
  /^( *)# securityContext:\n\1# {3}sysctls:\n\1# {5}- name: net\.ipv4\.ip_local_port_range\n\1# {7}value: "\d+ \d+"$/gm;
const COMPOSE_SYSCTL = /^( *)# sysctls:\n\1# {3}net\.ipv4\.ip_local_port_range: "\d+ \d+"$/gm;
const DOCKER_SYSCTL = /^(# +docker run --sysctl net\.ipv4\.ip_local_port_range=)"\d+ \d+"/gm;

const WHERE: Record<TemplateName, RegExp | string> = {
  k8s: POD_SYSCTL,
  pytorchjob: POD_SYSCTL,
  lws: POD_SYSCTL,
  compose: COMPOSE_SYSCTL,
  docker: DOCKER_SYSCTL,
  slurm:
    "a Slurm job runs in the nodes' own network namespace: set net.ipv4.ip_local_port_range on the nodes (sysctl -w, or a file in /etc/sysctl.d)",
  env: 'nccl-run reads no port range: it is a kernel setting of the network namespace, which the k8s, pytorchjob, lws, compose and docker templates write',
};

/** The template's text with the sysctl set to `range`. */
export function withPortRange(template: TemplateName, text: string, range: PortRange): string {
  const where = WHERE[template];
  if (typeof where === 'string') {
    throw new UsageError(`--port-range does not apply to the ${template} template: ${where}`);
  }
  const value = `${range.low} ${range.high}`;
  let found = 0;
  const written = text.replace(where, (_match, indent: string) => {
    found += 1;
    if (template === 'docker') return `${indent}"${value}"`;
    if (template === 'compose') {
      return `${indent}sysctls:\n${indent}  net.ipv4.ip_local_port_range: "${value}"`;
    }
    return [
      `${indent}securityContext:`,
      `${indent}  sysctls:`,
      `${indent}    - name: net.ipv4.ip_local_port_range`,
      `${indent}      value: "${value}"`,
    ].join('\n');
  });
  // Only a template edited out of step with this file gets here.
  if (found === 0)
    throw new Error(`the ${template} template has no port-range setting to switch on`);
  return written;
}
