/**
 * Whether the user has already set a variable nccl-run would export (SPEC
 * "What it exports": set only when not already set by the user).
 */

/**
 * NCCL (src/misc/socket.cc ncclFindInterfaces: `env && strlen(env) > 1`) and
 * torch's Gloo binding (torch/csrc/distributed/c10d/init.cpp:
 * `ifnameEnv && strlen(ifnameEnv) > 1`) both ignore an interface variable
 * shorter than two characters and fall back to their own heuristics, so such
 * a value is no choice at all: it counts as unset and nccl-run sets its own.
 */
const IGNORED_WHEN_SHORTER_THAN_TWO = new Set(['NCCL_SOCKET_IFNAME', 'GLOO_SOCKET_IFNAME']);

/**
 * torchrun 2.x takes an empty --local-addr as none (`local_addr or
 * socket.getfqdn()`, rendezvous/api.py and dynamic_rendezvous.py).
 */
const IGNORED_WHEN_EMPTY = new Set(['PET_LOCAL_ADDR']);

/** The user's value of `name`, or null when the variable is unset or its consumer ignores it. */
export function userValue(env: NodeJS.ProcessEnv, name: string): string | null {
  const value = env[name];
  if (value === undefined) return null;
  if (IGNORED_WHEN_SHORTER_THAN_TWO.has(name) && value.length < 2) return null;
  if (IGNORED_WHEN_EMPTY.has(name) && value === '') return null;
  return value;
}
