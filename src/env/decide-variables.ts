/**
 * What nccl-run will set, what it leaves alone of the user's, and what the user
 * should hear about (SPEC "What it exports" and "Warnings"). Pure: plan/plan.ts
 * has read the host, the names and the routes. SPEC's warning for a hostname
 * that resolves to loopback with no Gloo interface set cannot arise:
 * GLOO_SOCKET_IFNAME is always set here or kept from the user. The order is
 * SPEC's table, then the warnings in the order a user would fix them: their
 * own settings first, then the host, then the job's addresses.
 */

import type { HostFacts, RouteAnswer } from '../host/host-facts.js';
import { c10dStoreHostWarning } from '../job/store-role.js';
import type { Origin } from '../origin.js';
import type { ExcludeRule } from '../resolve/decision.js';
import type { MachineNames } from '../torch/store-host-rule.js';
import { type ExportInput, keptWarnings, settleVariables } from './exported-variables.js';
import { fasterInterfaceWarning } from './faster-interface.js';
import { coverageWarnings } from './interface-coverage.js';
import { loopbackMasterWarning } from './loopback-master.js';
import { masterNetworkWarning } from './master-network.js';
import { ncclLogWarnings } from './nccl-log.js';

export interface VariablesInput extends ExportInput {
  facts: HostFacts;
  /** What the user set: the environment over the env file over NCCL's files. */
  env: Readonly<Record<string, string | undefined>>;
  /** The job runs on this node alone (the plan's one decision, ResolveContext.singleNode). */
  singleNode: boolean;
  routesToMaster: readonly RouteAnswer[];
  masterAddresses: readonly string[];
  /** What the job's --master-addr resolves to where a c10d endpoint is not it (master-network.ts). */
  masterAddrAddresses: readonly string[];
  /** What torch compares a c10d endpoint with to host the store; null where it is not asked. */
  machine: MachineNames | null;
  /** The version of the torch that will run, whose store-host rule counts; null when unknown. */
  torch?: string | null;
  /** The exclude rules the chain ran with, so that no warning recommends an excluded interface. */
  excludes: ExcludeRule[];
  /** Where a variable the user set came from, for the messages that name it. */
  origin: (name: string) => Origin;
}

export interface Variables {
  /** What nccl-run sets (SPEC "What it exports"). */
  set: Record<string, string>;
  /** What the user had already set and nccl-run left alone. */
  kept: Record<string, string>;
  warnings: string[];
}

/** SPEC "What it exports": the variables, what was kept, and the warnings. ConfigError for a Gloo or TensorPipe interface that cannot work. */
export function decideVariables(input: VariablesInput): Variables {
  const { decision, facts, job } = input;
  const { set, kept, warnings } = settleVariables(input, input.env);
  const ncclIfname = kept.NCCL_SOCKET_IFNAME ?? set.NCCL_SOCKET_IFNAME ?? `=${decision.interface}`;
  const multiNode = !input.singleNode;
  warnings.push(
    ...keptWarnings(kept, (name) => ({
      decision,
      facts,
      ncclIfname,
      from: input.origin(name),
      multiNode,
    })),
    ...coverageWarnings(kept, decision.interface, input.routesToMaster),
    ...ncclLogWarnings(input.options.ncclLog, set, kept),
  );
  const later = [
    fasterInterfaceWarning(facts, decision, input.excludes, input.masterAddresses),
    masterNetworkWarning(job, facts, decision, input.routesToMaster, input.masterAddrAddresses),
    c10dStoreHostWarning(job, facts, input.masterAddresses, input.machine, input.torch),
    loopbackMasterWarning(job, input.masterAddresses),
  ];
  for (const warning of later) if (warning !== null) warnings.push(warning);
  return { set, kept, warnings };
}
