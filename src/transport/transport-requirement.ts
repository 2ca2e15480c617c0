/**
 * `--require-transport ib` (SPEC "RDMA transport"): NCCL's IB transport must
 * find an active port it can open. Checked by the commands that verify (run,
 * check), reported by explain. What is missing is exit 69; a setting of the
 * user's that turns the IB transport off (NCCL_NET, NCCL_IB_DISABLE) conflicts
 * with the requirement, exit 78.
 */
import { ConfigError, type NcclRunError, NoInterfaceError } from '../errors.js';
import { type Origin, originText } from '../origin.js';
import { type IbSettings, netExcludesIb } from './ib-settings.js';
import type { TransportVerdict } from './transport-verdict.js';

export const REQUIRED_TRANSPORTS = ['ib'] as const;
export type RequiredTransport = (typeof REQUIRED_TRANSPORTS)[number];

/** origin: the flag or variable that asked (--require-transport, NCCL_RUN_REQUIRE_TRANSPORT). Null when met or not asked. */
export function transportRequirementError(
  verdict: TransportVerdict,
  settings: IbSettings,
  required: RequiredTransport | null,
  origin: Origin,
): NcclRunError | null {
  if (required === null || verdict.kind !== 'socket') return null;
  const asked = `${originText(origin)} ${required}`;
  if (netExcludesIb(settings) || settings.disabledBy !== null) {
    const setting = netExcludesIb(settings)
      ? `NCCL_NET=${settings.net}`
      : `NCCL_IB_DISABLE=${settings.disabledBy}`;
    return new ConfigError(
      `${asked} conflicts with ${setting}, which keeps NCCL off its IB transport; unset it or drop ${originText(origin)}`,
    );
  }
  return new NoInterfaceError(
    `${asked}: NCCL's IB transport cannot run here: ${verdict.reason}${hint(verdict)}`,
  );
}

function hint(verdict: TransportVerdict): string {
  if (verdict.devices.length > 0 && !verdict.deviceFiles) {
    return ' (start the container with the devices, e.g. docker run --device=/dev/infiniband)';
  }
  return '';
}
