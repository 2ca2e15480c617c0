import type { HostFacts, RouteAnswer } from '../host/host-facts.js';
import type { JobShape } from '../job/job-shape.js';
import type { Decision } from '../resolve/decision.js';

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
}

export interface Variables {
  /** What nccl-run sets (SPEC "What it exports"). */
  set: Record<string, string>;
  /** What the user had already set and nccl-run left alone. */
  kept: Record<string, string>;
  warnings: string[];
}

/** SPEC "What it exports": the variables, what was kept, and the warnings. ConfigError for a Gloo address. */
export async function exportVariables(_input: VariablesInput): Promise<Variables> {
  throw new Error('exportVariables: not implemented yet');
}
