import type { ExcludeRule } from './decision.js';

/** SPEC "Default excludes". */
export const DEFAULT_EXCLUDES = [
  'lo', 'docker', 'veth', 'virbr', 'br-', 'cni', 'flannel', 'cali', 'tunl', 'tun', 'tap', 'wg',
  'tailscale', 'zt', 'kube-ipvs', 'vxlan', 'weave', 'cilium', 'lxc', 'podman', 'nodelocaldns',
] as const;

/** Parses one --exclude entry; throws a plain Error with the reason when malformed. */
export function parseExcludeRule(_text: string): ExcludeRule {
  throw new Error('parseExcludeRule: not implemented yet');
}
