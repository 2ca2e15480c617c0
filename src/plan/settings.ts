/**
 * What the user set, read once: the process environment over the env file's
 * extra keys (SPEC --env-file: they never override the environment), and
 * under both, NCCL's own configuration files, as NCCL reads them
 * (nccl/nccl-conf.ts). The values nccl-run keeps of the user's are decided
 * here, once, before the chain runs (env/exported-variables.ts keptValue),
 * and so is where each came from.
 */
import { keptValue } from '../env/exported-variables.js';
import type { NcclConfFile } from '../host/host-facts.js';
import { type NcclConf, readNcclConf } from '../nccl/nccl-conf.js';
import { commIdHost } from '../nccl/nccl-pick.js';
import type { Settled } from '../options/settle-options.js';
import type { Origin } from '../origin.js';

export interface UserSettings {
  /** The process environment, its unset entries dropped. */
  processEnv: Record<string, string>;
  /** The env file's extra keys below the process environment: what torchrun's environment starts from. */
  env: Record<string, string>;
  /** NCCL's own files: the user's settings too, below the environment, as NCCL reads them. */
  conf: NcclConf;
  /** What NCCL would read if nccl-run set nothing: the environment over NCCL's files. */
  ncclEnv: Record<string, string>;
  /** The user's NCCL_SOCKET_IFNAME and NCCL_SOCKET_FAMILY that nccl-run keeps; null where it sets its own. */
  kept: { ifname: string | null; family: string | null };
  /** NCCL_COMM_ID's host, as NCCL resolves it; null when unset or refused. */
  commIdHost: string | null;
  /** Where a variable the user set came from: NCCL's file, a PET_* or other variable, the env file. */
  originOf(name: string): Origin;
}

/** The user's environment, which the job's stack is read with before anything else. */
export function userEnvironment(
  settled: Pick<Settled, 'envFileExtras'>,
  env: NodeJS.ProcessEnv,
): Pick<UserSettings, 'processEnv' | 'env'> {
  const processEnv = Object.fromEntries(
    Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
  return { processEnv, env: { ...settled.envFileExtras, ...processEnv } };
}

/**
 * The rest of what the user set, once the NCCL that will load (its version)
 * is known. recordedConf: NCCL's files as a `--facts` snapshot's host read
 * them, read instead of this machine's; null where there is no such record.
 */
export function userSettings(
  { processEnv, env }: Pick<UserSettings, 'processEnv' | 'env'>,
  ncclVersion: string | null,
  force: boolean,
  recordedConf: readonly NcclConfFile[] | null = null,
): UserSettings {
  // NCCL's files never go into the child's environment: NCCL reads them itself.
  const conf = readNcclConf(env, ncclVersion, '', recordedConf);
  const ncclEnv = { ...conf.values, ...env };
  return {
    processEnv,
    env,
    conf,
    ncclEnv,
    kept: {
      ifname: keptValue(ncclEnv, 'NCCL_SOCKET_IFNAME', force),
      family: keptValue(ncclEnv, 'NCCL_SOCKET_FAMILY', force),
    },
    commIdHost: ncclEnv.NCCL_COMM_ID === undefined ? null : commIdHost(ncclEnv.NCCL_COMM_ID),
    originOf: (name) =>
      name in conf.origins
        ? { name, from: 'nccl-conf', file: conf.origins[name] }
        : {
            name,
            from: name in processEnv ? (name.startsWith('PET_') ? 'pet' : 'env') : 'env-file',
          },
  };
}
