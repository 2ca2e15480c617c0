/**
 * The strategy chain's vocabulary (SPEC "Choosing the interface"). A strategy
 * is a pure function of the host's facts and the resolution context; it picks,
 * skips with a reason, or stops the chain as fatal.
 */

import type { NetworkStatus } from '../cluster/multus-network-status.js';
import type { Family, HostFacts, RouteAnswer } from '../host/host-facts.js';
import type { NcclRules } from '../nccl/nccl-pick.js';
import type { Origin } from '../origin.js';
import type { Agreement } from './agreement.js';

/** Every strategy, in the default chain's order (strategies/index.ts), `agree` last: it is opt-in. */
export const STRATEGY_NAMES = [
  'explicit',
  'local',
  'multus',
  'subnet',
  'route',
  'speed',
  'agree',
] as const;
export type StrategyName = (typeof STRATEGY_NAMES)[number];

/** An exclude rule (SPEC --exclude): a name prefix, an exact name (=eth1) or a CIDR block. */
export type ExcludeRule =
  /** byDefault: one of SPEC's default excludes, which the user did not name too. */
  | { kind: 'prefix'; value: string; byDefault?: true }
  | { kind: 'exact'; value: string }
  | { kind: 'cidr'; network: string; prefixLength: number; family: Family }
  /** A GPU NIC a net plugin takes for its data (transport/plugin-nics.ts): never NCCL's bootstrap. */
  | { kind: 'plugin'; value: string; plugin: string };

export interface ResolveContext {
  /** --iface, in order of preference; empty when not given. */
  explicitInterfaces: string[];
  /** Where they were given (--iface, NCCL_RUN_IFACE, the env file), for the messages that name them. */
  explicitOrigin: Origin;
  /**
   * The user's NCCL_SOCKET_IFNAME (environment, env file or NCCL's own files),
   * when kept; never one NCCL ignores (env/exported-variables.ts userValue).
   */
  userNcclIfname: string | null;
  /** The user's NCCL_SOCKET_FAMILY, when kept; else nccl-run exports the settled family. */
  userNcclFamily: string | null;
  /** The NCCL version's interface-selection rules (nccl-pick.ts). */
  ncclRules: NcclRules;
  excludes: ExcludeRule[];
  /** The family to pick an address of (already settled from --family and the master). */
  family: Family;
  /** The master, when known: its name and every address it resolves to. */
  master: { host: string; addresses: string[] } | null;
  /** True when the job runs on this node alone (SPEC `local`). */
  singleNode: boolean;
  /** The kernel's routes to each master address (empty when no master or no route). */
  routesToMaster: RouteAnswer[];
  /** `multus`: what --network-status said; null without it, or when no strategy before multus needs it read. */
  networkStatus: NetworkStatus | null;
  /** SPEC `agree`: what every node published before the chain ran; null when agree is not in it. */
  agreement: Agreement | null;
}

export type StrategyOutcome =
  | { outcome: 'picked'; interface: string; address: string; reason: string }
  | { outcome: 'skipped'; reason: string }
  | { outcome: 'fatal'; reason: string };

export type Strategy = (facts: HostFacts, context: ResolveContext) => StrategyOutcome;

export interface TraceEntry {
  strategy: StrategyName;
  outcome: StrategyOutcome['outcome'];
  reason: string;
}

export interface Decision {
  interface: string;
  address: string;
  family: Family;
  strategy: StrategyName;
  reason: string;
  trace: TraceEntry[];
}
