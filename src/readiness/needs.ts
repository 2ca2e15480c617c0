/**
 * What the job needs from this node, as data the plan already has when it
 * has decided (SPEC "Readiness"): the job's shape and torchrun's
 * --nproc-per-node, the transport verdict, the NCCL that will load and the
 * environment it will read, the chosen interface and what the plan knows of
 * the routes and of the other nodes.
 */
import type { RequiredTransport } from '../transport/transport-requirement.js';
import type { TransportKind } from '../transport/transport-verdict.js';

export interface ReadinessNeeds {
  /**
   * torchrun's --nproc-per-node as torchrun gets it (argv, else
   * PET_NPROC_PER_NODE), '1' when neither gives it (torch's default): an
   * integer, or cpu, gpu, auto (local-ranks.ts resolves them as the torch
   * that will run does).
   */
  nprocPerNode: string;
  /** The torch that will run, X.Y.Z; null when unknown. */
  torchVersion: string | null;
  /** The job's node count, MIN:MAX for an elastic job. */
  nnodes: { min: number; max: number };
  /** Whether this node hosts the rendezvous store (job/store-role.ts), which holds a connection per agent and per worker. */
  storeHost: boolean;
  /** NCCL's data plane here (transport/transport-verdict.ts). */
  transport: TransportKind;
  /** --require-transport. */
  requireTransport: RequiredTransport | null;
  /** The NCCL the job loads, X.Y.Z; null when unknown (every version nccl-run knows is then assumed). */
  ncclVersion: string | null;
  /** The environment NCCL reads: torchrun's, with NCCL's own configuration files below it (NCCL_BUFFSIZE, NCCL_SHM_DISABLE, NCCL_P2P_DISABLE, ...). */
  ncclEnv: Readonly<Record<string, string | undefined>>;
  /** The chosen network; null when none was chosen. */
  network: {
    interface: string;
    family: 'ipv4' | 'ipv6';
    /** The other interfaces holding a usable address of the family: a multi-homed host. */
    otherInterfaces: readonly string[];
    /** Addresses the job's traffic comes from that the plan knows (the master's), and the interface this host routes to each through; null: no route. */
    routesBack: readonly { address: string; interface: string | null }[];
  } | null;
}
