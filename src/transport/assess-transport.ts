/**
 * The data plane for plan/plan.ts (SPEC "RDMA transport"): what NCCL's IB
 * transport will find with torchrun's environment, the checks of the user's
 * NCCL_IB_* settings, and whether `--require-transport` is met. Pure over the
 * facts; a NCCL_IB_HCA that selects nothing throws (ConfigError, 78).
 */
import type { NcclRunError } from '../errors.js';
import type { HostFacts, RdmaFacts } from '../host/host-facts.js';
import type { Origin } from '../origin.js';
import type { NetPluginSearch } from './find-net-plugin.js';
import { checkGidIndex } from './gid-index-check.js';
import { checkIbHca } from './ib-hca-check.js';
import { ibSettings } from './ib-settings.js';
import { pluginNics } from './plugin-nics.js';
import { efaDevices, pluginVerdict } from './plugin-verdict.js';
import { pluginWarnings } from './plugin-warnings.js';
import { type RequiredTransport, transportRequirementError } from './transport-requirement.js';
import { ibTransportOff, type TransportVerdict, transportVerdict } from './transport-verdict.js';

export interface TransportInput {
  /** HostFacts.rdma; a snapshot without it knows no RDMA device. */
  rdma: RdmaFacts | undefined;
  /** What NCCL reads: torchrun's environment over NCCL's own files. */
  ncclEnv: Readonly<Record<string, string | undefined>>;
  required: RequiredTransport | null;
  /** The flag or variable that set `required`. */
  requiredBy: Origin;
  /** Where the user set a variable: the environment, the env file, one of NCCL's files. */
  originOf: (name: string) => Origin;
  /** The net plugin NCCL will load (find-net-plugin.ts). */
  netPlugin: NetPluginSearch;
  /** The host's interfaces, for the plugin's own interface lists. */
  facts: Pick<HostFacts, 'interfaces'>;
}

export interface Transport {
  verdict: TransportVerdict;
  /** The net plugin search: what NCCL_NET_PLUGIN names, what the loader finds. */
  netPlugin: NetPluginSearch;
  /** The found plugin's own variables the job has (kept: nccl-run never sets them). */
  pluginVariables: Record<string, string>;
  required: RequiredTransport | null;
  /** What run and check exit with when `required` is not met; null when met or not asked. */
  unmet: NcclRunError | null;
  warnings: string[];
}

const NO_RDMA: RdmaFacts = { devices: [], deviceFiles: [] };

export function assessTransport(input: TransportInput): Transport {
  const rdma = input.rdma ?? NO_RDMA;
  const settings = ibSettings(input.ncclEnv);
  const ibVerdict = transportVerdict(rdma, settings);
  const verdict = pluginVerdict(
    input.netPlugin,
    rdma,
    settings,
    ibVerdict,
    pluginNics(input.netPlugin, input.facts.interfaces, input.ncclEnv),
  );
  // With the IB transport off, NCCL reads neither NCCL_IB_HCA nor NCCL_IB_GID_INDEX.
  const warnings =
    ibTransportOff(settings) === null
      ? [
          ...checkIbHca(rdma, settings, input.originOf('NCCL_IB_HCA')),
          ...checkGidIndex(
            rdma,
            settings,
            verdict,
            input.ncclEnv.NCCL_IB_GID_INDEX,
            input.originOf('NCCL_IB_GID_INDEX'),
          ),
        ]
      : [];
  const unmet = transportRequirementError(
    verdict,
    settings,
    input.required,
    input.requiredBy,
    input.netPlugin,
    rdma,
    ibVerdict,
  );
  return {
    verdict,
    netPlugin: input.netPlugin,
    pluginVariables: Object.fromEntries(
      (input.netPlugin.plugin?.kind.variables ?? []).flatMap((name) => {
        const value = input.ncclEnv[name];
        return value === undefined ? [] : [[name, value]];
      }),
    ),
    required: input.required,
    unmet,
    warnings: [
      ...warnings,
      ...pluginWarnings({
        search: input.netPlugin,
        verdict,
        efa: efaDevices(rdma),
        env: input.ncclEnv,
        interfaces: input.facts.interfaces,
        // Under the requirement the same words are its error.
        required: unmet !== null,
      }),
    ],
  };
}
