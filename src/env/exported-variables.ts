/**
 * Every variable nccl-run exports (SPEC "What it exports"), each described
 * once: its value for this job, whether --force replaces a user's value,
 * whose reader ignores which values (such a value counts as unset), the
 * option that asks for it, and how a value the user set is judged when it
 * is kept. The order is SPEC's table; every output (env, explain, the launch
 * summary) keeps it. Set only when the user has not set it; what was left
 * alone is reported as kept.
 *
 * No PET_* variable is ever replaced, --force or not: each is one of
 * torchrun's own arguments (argparse_util.py `env` makes PET_<DEST> the
 * option's default), which nccl-run reads and never rewrites; for the
 * cluster fill, nccl-run read the job's shape from the user's value, and
 * exporting another would make torchrun run a different job than the one
 * nccl-run checked.
 */

import type { HostFacts } from '../host/host-facts.js';
import type { JobShape } from '../job/job-shape.js';
import { ncclHonoursIfname } from '../nccl/nccl-ifname.js';
import { SOCKET_FAMILY } from '../nccl/nccl-pick.js';
import type { Options } from '../options/option-table.js';
import type { Origin } from '../origin.js';
import type { Decision } from '../resolve/decision.js';
import { checkGlooIfname } from './gloo-ifname.js';
import { NCCL_LOG_DEBUG, ncclLogFile } from './nccl-log.js';

export interface ExportInput {
  decision: Decision;
  job: JobShape;
  options: Pick<Options, 'ncclDebug' | 'ncclDebugSubsys' | 'requireTransport' | 'force'> &
    Partial<Pick<Options, 'ncclLog'>>;
  /**
   * Under --require-transport, the NCCL_NET that makes NCCL fail instead of
   * falling back (transport/transport-requirement.ts requiredNcclNet); IB
   * under `ib` when not given.
   */
  ncclNet?: string | null;
}

/** What a kept value is judged against. */
export interface KeptContext {
  decision: Decision;
  facts: HostFacts;
  /** The NCCL_SOCKET_IFNAME the job will run with (the user's, kept, or nccl-run's). */
  ncclIfname: string;
  /** Where the user set it: the environment, the env file, ~/.nccl.conf. */
  from: Origin;
  /** Whether other nodes take part (resolve/strategies/local.ts isSingleNode). */
  multiNode: boolean;
}

export interface ExportedVariable {
  /** Its value for this job; null when it is not exported this time. */
  value(input: ExportInput): string | null;
  forceable: boolean;
  /** The reader that ignores some values, and the rule it ignores them by. */
  ignoredBy?: { reader: string; rule: string; honours: (value: string) => boolean };
  /**
   * The option that asks for it: a kept value overrides the option, which the
   * user hears; null where another message says it (--nccl-log's, nccl-log.ts).
   */
  option?: string | ((input: ExportInput) => string | null);
  /** Warnings for a kept value; a ConfigError for one that will certainly fail. */
  checkKept?: (name: string, value: string, context: KeptContext) => string[];
}

/**
 * NCCL (ncclFindInterfaces: `env && strlen(env) > 1`) and torch's Gloo binding
 * (torch/csrc/distributed/c10d/init.cpp: `ifnameEnv && strlen(ifnameEnv) > 1`)
 * both ignore an interface variable shorter than two characters and fall back
 * to their own heuristics.
 */
const SHORTER_THAN_TWO = 'shorter than 2 characters';

const EXPORTED = {
  // NCCL matches names by prefix unless the list starts with `=`
  // (src/misc/utils.cc matchIfList): plain bond0 would also take bond0.2973.
  // A kept value is judged by what NCCL binds under it (nccl-pick-warnings.ts).
  NCCL_SOCKET_IFNAME: {
    value: ({ decision }) => `=${decision.interface}`,
    forceable: true,
    ignoredBy: { reader: 'NCCL', rule: SHORTER_THAN_TWO, honours: ncclHonoursIfname },
  },
  // Gloo and TensorPipe take one exact name (gloo-ifname.ts).
  GLOO_SOCKET_IFNAME: {
    value: ({ decision }) => decision.interface,
    forceable: true,
    ignoredBy: { reader: 'Gloo', rule: SHORTER_THAN_TWO, honours: ncclHonoursIfname },
    checkKept: (name, value, context) => glooCheck(name, value, context),
  },
  TP_SOCKET_IFNAME: {
    value: ({ decision }) => decision.interface,
    forceable: true,
    checkKept: (name, value, context) => glooCheck(name, value, context),
  },
  NCCL_SOCKET_FAMILY: {
    value: ({ decision }) => SOCKET_FAMILY[decision.family],
    forceable: true,
    checkKept: (_name, value, { decision }) => {
      const warning = socketFamilyWarning(value, decision);
      return warning === null ? [] : [warning];
    },
  },
  // torchrun 2.x's --local-addr (run.py) names this node in the c10d
  // rendezvous (dynamic_rendezvous.py _NodeDescGenerator.generate), and the
  // node that becomes its rank 0 hands it to every worker as MASTER_ADDR
  // (rendezvous/api.py RendezvousStoreInfo.build: `local_addr or
  // socket.getfqdn()`), where the FQDN may resolve to 127.0.1.1 or the
  // management network. torchrun 1.13 has no such option and ignores the
  // variable. A --local-addr on the command line wins over the variable in
  // torchrun, so exporting one then would only misreport.
  PET_LOCAL_ADDR: {
    value: ({ decision, job }) =>
      job.localAddr === null || job.localAddr.origin.from === 'pet' ? decision.address : null,
    forceable: false,
    ignoredBy: { reader: 'torchrun', rule: 'empty', honours: (value) => value !== '' },
  },
  // --nccl-log asks for INFO on the subsystems audit reads (nccl-log.ts);
  // --nccl-debug and --nccl-debug-subsys, given too, say which.
  NCCL_DEBUG: {
    value: ({ options }) =>
      options.ncclDebug ?? (options.ncclLog ? NCCL_LOG_DEBUG.NCCL_DEBUG : null),
    forceable: true,
    option: ({ options }) => (options.ncclDebug !== null ? '--nccl-debug' : null),
  },
  NCCL_DEBUG_SUBSYS: {
    value: ({ options }) =>
      options.ncclDebugSubsys ?? (options.ncclLog ? NCCL_LOG_DEBUG.NCCL_DEBUG_SUBSYS : null),
    forceable: true,
    option: ({ options }) => (options.ncclDebugSubsys !== null ? '--nccl-debug-subsys' : null),
  },
  NCCL_DEBUG_FILE: {
    value: ({ options }) => (options.ncclLog ? ncclLogFile(options.ncclLog) : null),
    forceable: true,
    option: '--nccl-log',
  },
  // SPEC --require-transport: NCCL_NET=IB makes ncclNetInit (src/net.cc) fail with "network
  // IB not found" where the IB transport finds no device, instead of running on sockets;
  // under efa, the name aws-ofi-nccl answers to does the same for the plugin.
  // The user's NCCL_NET is theirs to keep, --force or not (transport-requirement.ts says
  // when it conflicts).
  NCCL_NET: {
    value: ({ options, ncclNet }) =>
      ncclNet !== undefined ? ncclNet : options.requireTransport === 'ib' ? 'IB' : null,
    forceable: false,
  },
  // Filled in from the cluster, only where neither argv nor the environment gives them.
  PET_MASTER_ADDR: { value: ({ job }) => job.fill.PET_MASTER_ADDR ?? null, forceable: false },
  PET_MASTER_PORT: { value: ({ job }) => job.fill.PET_MASTER_PORT ?? null, forceable: false },
  PET_NNODES: { value: ({ job }) => job.fill.PET_NNODES ?? null, forceable: false },
  PET_NODE_RANK: { value: ({ job }) => job.fill.PET_NODE_RANK ?? null, forceable: false },
} satisfies Record<string, ExportedVariable>;

export type ExportedName = keyof typeof EXPORTED;

/** The user's value of `name`, or null when it is unset or its reader ignores it. */
export function userValue(env: Readonly<Record<string, string | undefined>>, name: ExportedName) {
  const value = env[name];
  if (value === undefined) return null;
  const ignored: ExportedVariable['ignoredBy'] = (EXPORTED[name] as ExportedVariable).ignoredBy;
  return ignored === undefined || ignored.honours(value) ? value : null;
}

/** The variables nccl-run sets, the user's it keeps, and what the user should hear about them. */
export interface VariableChoice {
  set: Record<string, string>;
  kept: Record<string, string>;
  warnings: string[];
}

/**
 * The user's value of `name` that nccl-run keeps (SPEC: it never overrides
 * what the user set; --force replaces a forceable one); null where nccl-run
 * sets its own. The plan decides the kept NCCL_SOCKET_IFNAME and
 * NCCL_SOCKET_FAMILY by it before the chain, and settleVariables every
 * variable by it after.
 */
export function keptValue(
  env: Readonly<Record<string, string | undefined>>,
  name: ExportedName,
  force: boolean,
): string | null {
  const user = userValue(env, name);
  return user !== null && !(force && (EXPORTED[name] as ExportedVariable).forceable) ? user : null;
}

/** What to set and what to keep of the user's, with what the user should hear about it. */
export function settleVariables(
  input: ExportInput,
  env: Readonly<Record<string, string | undefined>>,
): VariableChoice {
  const { force } = input.options;
  const choice: VariableChoice = { set: {}, kept: {}, warnings: [] };
  for (const [name, variable] of Object.entries(EXPORTED) as [ExportedName, ExportedVariable][]) {
    const value = variable.value(input);
    if (value === null) continue;
    const raw = env[name];
    const user = userValue(env, name);
    const kept = keptValue(env, name, force);
    if (user === null) {
      choice.set[name] = value;
      if (raw !== undefined && raw !== '' && variable.ignoredBy !== undefined) {
        choice.warnings.push(
          `${name}='${raw}' is ${variable.ignoredBy.rule}, which ${variable.ignoredBy.reader} ignores; setting ${name}='${value}'`,
        );
      }
    } else if (kept === null) {
      choice.set[name] = value;
      if (user !== value)
        choice.warnings.push(`replacing your ${name}='${user}' with '${value}' (--force)`);
    } else {
      choice.kept[name] = user;
      const option =
        typeof variable.option === 'function' ? variable.option(input) : variable.option;
      if (option != null && user !== value) {
        choice.warnings.push(
          `${name}='${user}' is already set, so ${option} ${value} does not apply; --force replaces it`,
        );
      }
    }
  }
  return choice;
}

/** The warnings (and the ConfigError) for each kept value, in the table's order. */
export function keptWarnings(
  kept: Readonly<Record<string, string>>,
  context: (name: string) => KeptContext,
): string[] {
  return Object.entries(kept).flatMap(([name, value]) => {
    const variable = EXPORTED[name as ExportedName] as ExportedVariable | undefined;
    return variable?.checkKept?.(name, value, context(name)) ?? [];
  });
}

function glooCheck(name: string, value: string, context: KeptContext): string[] {
  return checkGlooIfname(name as 'GLOO_SOCKET_IFNAME' | 'TP_SOCKET_IFNAME', value, {
    ncclIfname: context.ncclIfname,
    chosen: context.decision.interface,
    facts: context.facts,
    from: context.from,
    multiNode: context.multiNode,
  });
}

/**
 * A user's NCCL_SOCKET_FAMILY that nccl-run keeps. NCCL (src/misc/socket.cc
 * ncclEnvSocketFamily) strcmp()s it against exactly "AF_INET" and "AF_INET6"
 * and silently ignores anything else; a valid one that differs from the
 * chosen family makes NCCL look for an address the chosen interface may not have.
 */
function socketFamilyWarning(
  kept: string,
  chosen: Pick<Decision, 'interface' | 'address' | 'family'>,
): string | null {
  const wanted = SOCKET_FAMILY[chosen.family];
  if (kept === wanted) return null;
  if (kept !== SOCKET_FAMILY.ipv4 && kept !== SOCKET_FAMILY.ipv6) {
    return `NCCL_SOCKET_FAMILY='${kept}' (yours, kept) is neither AF_INET nor AF_INET6, so NCCL ignores it; the chosen ${chosen.interface} ${chosen.address} wants ${wanted}`;
  }
  return `NCCL_SOCKET_FAMILY=${kept} (yours, kept) but the chosen ${chosen.interface} ${chosen.address} is ${chosen.family === 'ipv4' ? 'IPv4' : 'IPv6'}; NCCL will look for an ${kept === 'AF_INET' ? 'IPv4' : 'IPv6'} address; --force sets ${wanted}`;
}
