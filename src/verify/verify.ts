import type { Logger } from '../log.js';
import type { HostFacts } from '../host/host-facts.js';
import type { JobShape } from '../job/job-shape.js';
import type { Decision } from '../resolve/decision.js';

export interface VerifyInput {
  level: 'none' | 'local' | 'master' | 'peers';
  decision: Decision;
  job: JobShape;
  facts: HostFacts;
  timeoutMs: number;
  /** Hosts for --verify peers (already expanded). */
  peers: string[];
  probePort: number | null;
  logger: Logger;
}

export interface PeerResult {
  peer: string;
  address: string | null;
  port: number;
  ok: boolean;
  /** refused, unreachable, timed out, wrong source address, ... */
  error: string | null;
  /** The source address the other side saw, for peers. */
  seenSource: string | null;
  elapsedMs: number;
}

export interface VerifyReport {
  level: VerifyInput['level'];
  ok: boolean;
  warnings: string[];
  results: PeerResult[];
}

/** SPEC "Verification". Returns the report; UnreachableError (exit 75) when it fails. */
export async function verify(_input: VerifyInput): Promise<VerifyReport> {
  throw new Error('verify: not implemented yet');
}
