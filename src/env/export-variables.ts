/**
 * The variables nccl-run exports, what it left alone, and what the user
 * should hear about (SPEC "What it exports" and "Warnings"). SPEC's warning
 * for a hostname that resolves to loopback with no Gloo interface set cannot
 * arise: GLOO_SOCKET_IFNAME is always set here or kept from the user. The order is
 * SPEC's table, then the warnings in the order a user would fix them: their
 * own settings first, then the host, then the job's addresses.
 */
import type { HostFacts, RouteAnswer } from '../host/host-facts.js';
import type { JobShape } from '../job/job-shape.js';
import type { Decision, ExcludeRule } from '../resolve/decision.js';
import { buildExcludes } from '../resolve/excludes.js';
import type { RequiredTransport } from '../transport/transport-requirement.js';
import { c10dStoreHostWarning } from './c10d-store-host.js';
import { fasterInterfaceWarning } from './faster-interface.js';
import { checkGlooIfname } from './gloo-ifname.js';
import { coverageWarnings } from './interface-coverage.js';
import { loopbackMasterWarning } from './loopback-master.js';
import { masterNetworkWarning } from './master-network.js';
import { settleVariables } from './settle-variables.js';
import { socketFamilyWarning } from './socket-family.js';
import { wantedVariables } from './wanted-variables.js';

export interface VariablesInput {
  decision: Decision;
  facts: HostFacts;
  job: JobShape;
  /** The process environment (what the user set). */
  env: NodeJS.ProcessEnv;
  force: boolean;
  ncclDebug: string | null;
  ncclDebugSubsys: string | null;
  routesToMaster: RouteAnswer[];
  masterAddresses: string[];
  /**
   * The exclude rules the chain ran with (ResolveContext.excludes), so that
   * no warning recommends an interface the user excluded. SPEC's default
   * list when not given.
   */
  excludes?: ExcludeRule[];
  /** Where a variable the user set came from, for the messages that name it. */
  origin?: (name: string) => string;
  /** --require-transport, which also sets NCCL_NET. */
  requireTransport?: RequiredTransport | null;
}

export interface Variables {
  /** What nccl-run sets (SPEC "What it exports"). */
  set: Record<string, string>;
  /** What the user had already set and nccl-run left alone. */
  kept: Record<string, string>;
  warnings: string[];
}

/** SPEC "What it exports": the variables, what was kept, and the warnings. ConfigError for a Gloo or TensorPipe interface that cannot work. */
export async function exportVariables(input: VariablesInput): Promise<Variables> {
  const { decision, facts, job } = input;
  const wanted = wantedVariables(
    decision,
    job,
    input.ncclDebug,
    input.ncclDebugSubsys,
    input.requireTransport ?? null,
  );
  const { set, kept, warnings } = settleVariables(wanted, input.env, input.force);

  const ncclIfname = kept.NCCL_SOCKET_IFNAME ?? set.NCCL_SOCKET_IFNAME ?? `=${decision.interface}`;
  for (const variable of ['GLOO_SOCKET_IFNAME', 'TP_SOCKET_IFNAME'] as const) {
    const value = kept[variable];
    if (value === undefined) continue;
    const from = input.origin?.(variable) ?? 'the environment';
    warnings.push(
      ...checkGlooIfname(variable, value, { ncclIfname, chosen: decision.interface, facts, from }),
    );
  }
  warnings.push(...coverageWarnings(kept, decision.interface, input.routesToMaster));
  const userFamily = kept.NCCL_SOCKET_FAMILY;
  const family = userFamily === undefined ? null : socketFamilyWarning(userFamily, decision);

  const excludes = input.excludes ?? buildExcludes([], false);
  const later = [
    family,
    fasterInterfaceWarning(facts, decision, excludes, input.masterAddresses),
    await masterNetworkWarning(job, facts, decision, input.routesToMaster),
    await c10dStoreHostWarning(job, facts, input.masterAddresses),
    loopbackMasterWarning(job, input.masterAddresses),
  ];
  for (const warning of later) if (warning !== null) warnings.push(warning);
  return { set, kept, warnings };
}
