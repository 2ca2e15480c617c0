/**
 * What the user hears about net plugins (SPEC "RDMA transport"): EFA
 * devices and no plugin NCCL can load (the job runs on sockets, silently);
 * a plugin whose own interface list names an interface that is missing or
 * down (the plugin fails at its init, or runs on fewer NICs).
 */
import type { InterfaceFacts, RdmaDeviceFacts } from '../host/host-facts.js';
import { isUp } from '../host/link-state.js';
import { ncclIfnameMatches, parseNcclIfname } from '../nccl/nccl-ifname.js';
import type { NetPluginSearch } from './find-net-plugin.js';
import type { TransportVerdict } from './transport-verdict.js';

export interface PluginWarningInput {
  search: NetPluginSearch;
  verdict: TransportVerdict;
  efa: readonly RdmaDeviceFacts[];
  env: Readonly<Record<string, string | undefined>>;
  interfaces: readonly InterfaceFacts[];
  required: boolean;
}

export function pluginWarnings(input: PluginWarningInput): string[] {
  const { search, verdict, efa } = input;
  const warnings: string[] = [];
  if (efa.length > 0 && verdict.kind === 'socket' && !input.required) {
    warnings.push(
      `${verdict.reason}; put aws-ofi-nccl's folder (the EFA installer's /opt/amazon/ofi-nccl/lib) on LD_LIBRARY_PATH, or run an image that has it (an AWS Deep Learning Container); --require-transport efa refuses to start without it`,
    );
  }
  const plugin = search.plugin;
  if (plugin !== null && verdict.kind !== 'socket') {
    for (const variable of [plugin.kind.ifnameVariable, plugin.kind.ctrlVariable]) {
      if (variable === null) continue;
      const value = input.env[variable];
      if (value === undefined || value.length <= 1) continue;
      const problems = listProblems(value, input.interfaces);
      if (problems.length > 0)
        warnings.push(
          `${variable}=${value} (${plugin.kind.label}'s own list, kept): ${problems.join(', ')}; the plugin cannot use it`,
        );
    }
  }
  return warnings;
}

/** Each exact or prefix entry of an NCCL-style list that matches no interface, or only interfaces that are down. */
function listProblems(value: string, interfaces: readonly InterfaceFacts[]): string[] {
  const list = parseNcclIfname(value);
  if (list.mode === 'exclude') return [];
  return value
    .replace(/^\^?=?/, '')
    .split(',')
    .filter((entry) => entry !== '')
    .flatMap((entry) => {
      const one = parseNcclIfname(`${list.exact ? '=' : ''}${entry}`);
      const matched = interfaces.filter((iface) => ncclIfnameMatches(one, iface.name));
      if (matched.length === 0) return [`${entry} does not exist here`];
      if (matched.every((iface) => !isUp(iface)))
        return [
          `${matched.map((iface) => iface.name).join(', ')} ${matched.length === 1 ? 'is' : 'are'} down`,
        ];
      return [];
    });
}
