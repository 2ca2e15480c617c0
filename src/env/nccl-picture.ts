/**
 * What NCCL and Gloo will bind (SPEC "NCCL's own pick", "Outputs"): NCCL's
 * pick with the environment torchrun gets plus NCCL's own files; what NCCL
 * and Gloo would bind if nccl-run set nothing; and the warnings about NCCL's
 * pick. Pure: plan/plan.ts reads the files and resolves the names.
 */

import type { HostFacts } from '../host/host-facts.js';
import { ncclBehaviour } from '../nccl/behaviour.js';
import { ncclHonoursIfname } from '../nccl/nccl-ifname.js';
import { type NcclBind, ncclDevices, ncclPick, ncclSettings } from '../nccl/nccl-pick.js';
import type { Origin } from '../origin.js';
import type { Decision, ResolveContext } from '../resolve/decision.js';
import { glooPick } from '../resolve/gloo-pick.js';
import { reachMaster } from '../resolve/reach-master.js';
import { dataPlaneWarnings } from './data-plane-warnings.js';
import { userValue } from './exported-variables.js';
import { bindAddressWarning, ncclSettingWarnings } from './nccl-pick-warnings.js';

export interface PictureInput {
  facts: HostFacts;
  context: ResolveContext;
  /** The chain's pick; null where it picked nothing (a refusal's picture). */
  decision: Decision | null;
  /** What NCCL would read if nccl-run set nothing: the user's environment over NCCL's files. */
  userNcclEnv: Readonly<Record<string, string>>;
  /** What NCCL reads in the job: torchrun's environment (the user's and what nccl-run sets) over NCCL's files. */
  jobNcclEnv: Readonly<Record<string, string>>;
  /** What the user set: the env file below the process environment (Gloo reads no file). */
  userEnv: Readonly<Record<string, string>>;
  /** The user's NCCL_SOCKET_IFNAME when nccl-run kept it, and where it came from. */
  keptIfname: { value: string; from: Origin } | null;
  commIdAddress: string | null;
  /** The NCCL release the job loads (null: unknown), for its NCCL_COMM_ID subnet test (releases.ts). */
  ncclVersion: string | null;
  hostnameAddresses: readonly string[];
}

export interface Picture {
  /** What NCCL binds in the job. */
  pick: NcclBind | null;
  /** The socket transport's devices in the job, in NCCL's index order (nccl-pick.ts ncclDevices). */
  devices: NcclBind[];
  unmanaged: { nccl: NcclBind | null; gloo: NcclBind | null; ncclDevices: NcclBind[] };
  /** About the job's data-plane devices (data-plane-warnings.ts). */
  deviceWarnings: string[];
  /** About the user's own settings (NCCL_COMM_ID, a kept NCCL_SOCKET_IFNAME): they come first. */
  settingWarnings: string[];
  /** About the host's address order: after the others. */
  bindWarning: string | null;
}

export function ncclPicture(input: PictureInput): Picture {
  const { facts, context } = input;
  const rules = context.ncclRules;
  const settings = ncclSettings(input.jobNcclEnv);
  const { commIdSubnetMatch } = ncclBehaviour(input.ncclVersion);
  const pick = ncclPick(facts, settings, rules, input.commIdAddress, commIdSubnetMatch);
  const devices = ncclDevices(facts, settings, rules, input.commIdAddress, commIdSubnetMatch);
  const userSettings = ncclSettings(input.userNcclEnv);
  const masters = context.master?.addresses ?? [];
  const reach = reachMaster(facts, context);
  return {
    pick,
    devices,
    deviceWarnings: dataPlaneWarnings({
      facts,
      devices,
      reaches: reach?.interface ?? null,
      masterAddresses: masters,
      keptIfname:
        input.keptIfname !== null && ncclHonoursIfname(input.keptIfname.value)
          ? input.keptIfname
          : null,
      singleNode: context.singleNode,
    }),
    unmanaged: {
      ncclDevices: ncclDevices(facts, userSettings, rules, input.commIdAddress, commIdSubnetMatch),
      nccl: ncclPick(facts, userSettings, rules, input.commIdAddress, commIdSubnetMatch),
      gloo: glooPick(
        facts,
        userValue(input.userEnv, 'GLOO_SOCKET_IFNAME'),
        input.hostnameAddresses,
      ),
    },
    settingWarnings: ncclSettingWarnings({
      facts,
      settings,
      pick,
      reach,
      chosen: input.decision?.interface ?? null,
      keptIfname: input.keptIfname,
      commIdAddress: input.commIdAddress,
      commIdInverted: commIdSubnetMatch === 'inverted' ? input.ncclVersion : null,
      masterAddresses: masters,
    }),
    bindWarning: bindAddressWarning(facts, pick, masters),
  };
}
