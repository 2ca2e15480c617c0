/**
 * `--require-transport ib|efa|rdma` (SPEC "RDMA transport"): NCCL's data
 * plane must be IB/RoCE verbs (`ib`), EFA through aws-ofi-nccl (`efa`), or
 * either (`rdma`). Checked by the commands that verify (run, check),
 * reported by explain. Missing hardware or device files is exit 69; a
 * setting that keeps NCCL off it (NCCL_NET, NCCL_IB_DISABLE), or EFA
 * devices with no plugin NCCL can load, is a configuration to fix, exit 78.
 * Each sets the NCCL_NET that makes NCCL fail instead of falling back
 * (requiredNcclNet), never over the user's own.
 */

import { ConfigError, type NcclRunError, NoInterfaceError } from '../errors.js';
import type { RdmaFacts } from '../host/host-facts.js';
import { type Origin, originText } from '../origin.js';
import type { NetPluginSearch } from './find-net-plugin.js';
import { type IbSettings, netExcludesIb } from './ib-settings.js';
import { NET_PLUGIN_KINDS } from './net-plugin-kinds.js';
import { efaDevices, netExcludesPlugin } from './plugin-verdict.js';
import type { TransportKind, TransportVerdict } from './transport-verdict.js';

export const REQUIRED_TRANSPORTS = ['ib', 'efa', 'rdma'] as const;
export type RequiredTransport = (typeof REQUIRED_TRANSPORTS)[number];

const MEETS: Record<RequiredTransport, readonly TransportKind[]> = {
  ib: ['ib', 'roce'],
  efa: ['efa'],
  rdma: ['ib', 'roce', 'efa'],
};

const AWS_OFI = NET_PLUGIN_KINDS.find((kind) => kind.id === 'aws-ofi-nccl');

/**
 * The NCCL_NET under a requirement: the plugin's name for EFA (aws-ofi-nccl's
 * when none is found: NCCL then fails, "network AWS Libfabric not found"),
 * IB for verbs; for `rdma` whichever plane this host has.
 */
export function requiredNcclNet(
  required: RequiredTransport | null,
  search: NetPluginSearch,
  rdma: RdmaFacts | undefined,
): string | null {
  if (required === null) return null;
  const efaPlane =
    required === 'efa' || (required === 'rdma' && efaDevices(rdma ?? NO_RDMA).length > 0);
  if (!efaPlane) return 'IB';
  const plugin = search.plugin;
  if (plugin !== null && plugin.kind.fabric === 'efa') return plugin.kind.ncclNet(plugin.version);
  return AWS_OFI?.ncclNet(null) ?? null;
}

const NO_RDMA: RdmaFacts = { devices: [], deviceFiles: [] };

/** origin: the flag or variable that asked (--require-transport, NCCL_RUN_REQUIRE_TRANSPORT). Null when met or not asked. */
export function transportRequirementError(
  verdict: TransportVerdict,
  settings: IbSettings,
  required: RequiredTransport | null,
  origin: Origin,
  search: NetPluginSearch,
  rdma: RdmaFacts = NO_RDMA,
  /** NCCL's own transports' verdict, for `ib`'s words. */
  ibVerdict: TransportVerdict = verdict,
): NcclRunError | null {
  if (required === null || MEETS[required].includes(verdict.kind)) return null;
  const asked = `${originText(origin)} ${required}`;
  const efa = efaDevices(rdma);
  const wantsEfa = required === 'efa' || (required === 'rdma' && efa.length > 0);
  if (wantsEfa) {
    if (efa.length === 0)
      return new NoInterfaceError(
        `${asked}: no EFA device here (no device with driver efa in /sys/class/infiniband)`,
      );
    const excluded = netExcludesPlugin(search, settings);
    if (excluded !== null)
      return new ConfigError(
        `${asked} conflicts with ${excluded}; unset it or drop ${originText(origin)}`,
      );
    if (search.plugin === null || search.plugin.kind.fabric !== 'efa')
      return new ConfigError(
        `${asked}: EFA devices (${efa.map((device) => device.name).join(', ')}) but NCCL will not load aws-ofi-nccl: ${search.plugin === null ? search.notFound : `it loads ${search.plugin.kind.label} (${search.plugin.path}) first`}; put the plugin's folder (the EFA installer's /opt/amazon/ofi-nccl/lib) on LD_LIBRARY_PATH, or run an image that has it (an AWS Deep Learning Container)`,
      );
    return new NoInterfaceError(`${asked}: ${verdict.reason}`);
  }
  if (netExcludesIb(settings) || settings.disabledBy !== null) {
    const setting = netExcludesIb(settings)
      ? `NCCL_NET=${settings.net}`
      : `NCCL_IB_DISABLE=${settings.disabledBy}`;
    return new ConfigError(
      `${asked} conflicts with ${setting}, which keeps NCCL off its IB transport; unset it or drop ${originText(origin)}`,
    );
  }
  return new NoInterfaceError(
    `${asked}: NCCL's IB transport cannot run here: ${ibVerdict.reason}${hint(ibVerdict)}`,
  );
}

function hint(verdict: TransportVerdict): string {
  if (verdict.devices.length > 0 && !verdict.deviceFiles) {
    return ' (start the container with the devices, e.g. docker run --device=/dev/infiniband)';
  }
  return '';
}
