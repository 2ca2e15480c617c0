/**
 * What the job needs from this node (readiness/needs.ts), from what the plan
 * already knows, and the readiness verdict of the plan (SPEC "Readiness"):
 * the findings in order, and the refusal (exit 78) that a finding which
 * will certainly fail the job makes, thrown by run and check before any
 * wait and shown by explain. Pure: the node's facts were read by plan.ts.
 */
import { ConfigError } from '../errors.js';
import type { HostFacts, RouteAnswer } from '../host/host-facts.js';
import type { JobShape } from '../job/job-shape.js';
import type { StoreRole } from '../job/store-role.js';
import type { CheckName } from '../readiness/check-names.js';
import { type Finding, findingText } from '../readiness/finding.js';
import type { ReadinessNeeds } from '../readiness/needs.js';
import type { NodeReadiness } from '../readiness/node-readiness.js';
import { readiness } from '../readiness/readiness.js';
import type { Decision } from '../resolve/decision.js';
import { unusable } from '../resolve/usable.js';
import type { RequiredTransport } from '../transport/transport-requirement.js';
import type { TransportKind } from '../transport/transport-verdict.js';

export interface Readiness {
  findings: Finding[];
  /** What run and check exit with when a finding is `refused`; null when none is. */
  refused: ConfigError | null;
}

export interface NeedsInput {
  job: JobShape;
  torchVersion: string | null;
  ncclVersion: string | null;
  /** The environment NCCL reads in the job: torchrun's over NCCL's files. */
  ncclEnv: Readonly<Record<string, string | undefined>>;
  transport: TransportKind;
  requireTransport: RequiredTransport | null;
  role: StoreRole | null;
  singleNode: boolean;
  /** The chain's pick; null where it picked nothing (a refusal: no network to check). */
  decision: Decision | null;
  facts: HostFacts;
  /** The kernel's route to each of the master's addresses. */
  routesToMaster: readonly RouteAnswer[];
}

export function readinessNeeds(input: NeedsInput): ReadinessNeeds {
  const { decision, job } = input;
  return {
    nprocPerNode: job.nprocPerNode,
    torchVersion: input.torchVersion,
    nnodes: { min: job.nnodes.min, max: job.nnodes.max },
    storeHost: input.role === null ? input.singleNode : input.role.role === 'store host',
    transport: input.transport,
    requireTransport: input.requireTransport,
    ncclVersion: input.ncclVersion,
    ncclEnv: input.ncclEnv,
    network: decision === null ? null : networkNeeds(input, decision),
  };
}

function networkNeeds(input: NeedsInput, decision: Decision): ReadinessNeeds['network'] {
  const otherInterfaces = input.facts.interfaces
    .filter(
      (iface) =>
        iface.name !== decision.interface &&
        iface.kind !== 'loopback' &&
        unusable(iface, decision.family) === null,
    )
    .map((iface) => iface.name);
  return {
    interface: decision.interface,
    family: decision.family,
    otherInterfaces,
    // This host's own addresses route by lo: no packet comes back from them.
    routesBack: input.singleNode
      ? []
      : input.routesToMaster
          .filter((route) => route.type === 'unicast')
          .map((route) => ({ address: route.destination, interface: route.interface })),
  };
}

/** The findings, and the one refusal that names every certain failure. */
export function assessReadiness(
  needs: ReadinessNeeds,
  node: NodeReadiness,
  skip: readonly CheckName[],
): Readiness {
  const findings = readiness(needs, node, skip);
  const refused = findings.filter((finding) => finding.level === 'refused');
  return {
    findings,
    refused:
      refused.length === 0
        ? null
        : new ConfigError(
            `this node is not ready for the job: ${refused.map(findingText).join('; ')}`,
          ),
  };
}
