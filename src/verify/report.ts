/**
 * What a verification found (SPEC "Outputs", check --json): one result per
 * check and peer, and the report around them; verify.ts fills it in,
 * failure.ts turns a failed one into the error.
 */
import type { CollectiveReport } from '../collective/report.js';
import type { VerifyLevel } from '../options/verify-level.js';
import type { RendezvousOutcome } from '../peers/peers.js';
import type { ReachError } from '../reach/reach-error.js';

export interface PeerResult {
  peer: string;
  address: string | null;
  port: number;
  ok: boolean;
  /** refused, unreachable, timed out, wrong source address, not registered, ... */
  error: ReachError | null;
  /** The source address the other side saw, for peers. */
  seenSource: string | null;
  /** Probe only: the throughput this node measured to this peer (next in ring order), Mbit/s. */
  bandwidthMbps: number | null;
  elapsedMs: number;
  /**
   * bind: the master node's rendezvous port; connect: a worker to the master;
   * listen: a probe service of this node; register: with the master's probe
   * service (a node that never came is named here); probe: the mesh, both ways.
   */
  check: 'bind' | 'connect' | 'data path' | 'listen' | 'register' | 'probe';
  /** The errno or what was seen behind `error`, e.g. ECONNREFUSED, "no answer in 5s". */
  detail: string | null;
  /** Probe only: the peer → this node leg; `ok` above covers both legs. */
  inbound: {
    ok: boolean;
    error: ReachError | null;
    detail: string | null;
    source: string | null;
    /** What the peer measured to this node (we are its next in ring order), Mbit/s. */
    bandwidthMbps: number | null;
  } | null;
}

export interface VerifyReport {
  level: VerifyLevel;
  ok: boolean;
  warnings: string[];
  results: PeerResult[];
  /** --verify peers: how many nodes came, of the job's MAX, and whether this one came late; else null. */
  rendezvous: RendezvousOutcome | null;
  /** The interface and address every check ran over. */
  interface: string;
  localAddress: string;
  elapsedMs: number;
  /** --verify collective: the miniature's figures and verdict (collective/report.ts); absent below it. */
  collective?: CollectiveReport;
}
