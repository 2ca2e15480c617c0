/**
 * SPEC "What it exports": set only when the user has not already set it;
 * --force replaces the user's value; what was left alone is reported as kept.
 */
import { userValue } from './user-value.js';
import type { WantedVariable } from './wanted-variables.js';

export interface Settled {
  set: Record<string, string>;
  kept: Record<string, string>;
  warnings: string[];
}

/** Who ignores a one-character value (user-value.ts). */
const IGNORED_BY: Record<string, string> = {
  NCCL_SOCKET_IFNAME: 'NCCL',
  GLOO_SOCKET_IFNAME: 'Gloo',
};

/** Options a user gives on this very command line, which a kept variable overrides without a word otherwise. */
const FROM_FLAG: Record<string, string> = {
  NCCL_DEBUG: '--nccl-debug',
  NCCL_DEBUG_SUBSYS: '--nccl-debug-subsys',
};

export function settleVariables(
  wanted: readonly WantedVariable[],
  env: NodeJS.ProcessEnv,
  force: boolean,
): Settled {
  const settled: Settled = { set: {}, kept: {}, warnings: [] };
  for (const { name, value, forceable } of wanted) {
    const raw = env[name];
    const user = userValue(env, name);
    if (user === null) {
      settled.set[name] = value;
      if (raw !== undefined && raw !== '') {
        settled.warnings.push(
          `${name}='${raw}' is shorter than 2 characters, which ${IGNORED_BY[name]} ignores; setting ${name}='${value}'`,
        );
      }
    } else if (force && forceable) {
      settled.set[name] = value;
      if (user !== value)
        settled.warnings.push(`replacing your ${name}='${user}' with '${value}' (--force)`);
    } else {
      settled.kept[name] = user;
      const flag = FROM_FLAG[name];
      if (flag !== undefined && user !== value) {
        settled.warnings.push(
          `${name}='${user}' is already set, so ${flag} ${value} does not apply; --force replaces it`,
        );
      }
    }
  }
  return settled;
}
