/**
 * What NCCL may read that nccl-run cannot see (SPEC "The stack"), so that
 * NCCL's pick may differ from the model:
 * - its env plugin (v2.28.7-1, src/plugin/env.cc): a `libnccl-env.so` that
 *   dlopen finds (beside the NCCL that loads, or on the library path), or
 *   the one NCCL_ENV_PLUGIN names, answers NCCL's getenv, NCCL_SOCKET_IFNAME
 *   included, from wherever it likes;
 * - NCCL_OOB_NET_ENABLE=1: the bootstrap's out-of-band traffic goes over
 *   the network plugin (InfiniBand, on NCCL_OOB_NET_IFNAME's devices), not
 *   over the socket interface NCCL_SOCKET_IFNAME picks; read from v2.23.4-1
 *   (src/bootstrap.cc; the settings lint's record, params/nccl-params.ts),
 *   so an older release ignores it (an unknown version may read it);
 * - a release older than the oldest nccl-run models (releases.ts
 *   NCCL_OLDEST_MODELLED): its rules were not read, so its picture is uncertain.
 * Only files and variables are looked at.
 */
import { statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { attempt } from '../host/attempt.js';
import { libraryDirs } from '../host/library-dirs.js';
import { ncclBehaviour, olderThanModelled } from './behaviour.js';
import type { NcclLibrary } from './find-nccl.js';
import { parametersOf } from './params/release-parameters.js';
import { NCCL_OLDEST_MODELLED } from './releases.js';

const ENV_PLUGIN = 'libnccl-env.so';

/** The libnccl-env.so NCCL's dlopen would find; null when none, or the NCCL has no env plugin. */
export function findEnvPlugin(
  nccl: NcclLibrary,
  env: Readonly<Record<string, string | undefined>>,
  root = '',
): string | null {
  if (!ncclBehaviour(nccl.version).envPlugin) return null;
  const dirs = [
    ...(nccl.library === null ? [] : [dirname(nccl.library)]),
    ...libraryDirs(env, root),
  ];
  for (const dir of dirs) {
    const file = join(dir, ENV_PLUGIN);
    // A library folder this user may not search (EACCES) is one NCCL cannot load from either.
    if (attempt(() => statSync(join(root, file), { throwIfNoEntry: false })?.isFile())) return file;
  }
  return null;
}

/**
 * One line per setting NCCL may read that nccl-run cannot see. env: the
 * job's environment, where NCCL's loader reads NCCL_ENV_PLUGIN (plain
 * getenv); ncclView: that over NCCL's files, as NCCL reads its parameters.
 */
export function unseenNcclSettings(
  nccl: NcclLibrary,
  envPlugin: string | null,
  env: Readonly<Record<string, string | undefined>>,
  ncclView: Readonly<Record<string, string | undefined>> = env,
): string[] {
  const notes: string[] = [];
  const named = env.NCCL_ENV_PLUGIN ?? '';
  const version = nccl.version === null ? 'NCCL' : `NCCL ${nccl.version}`;
  if (olderThanModelled(nccl.version)) {
    notes.push(
      `${version} is older than ${NCCL_OLDEST_MODELLED}, the oldest release nccl-run models: its interface rules are taken as ${NCCL_OLDEST_MODELLED}'s, unchecked, so this picture is uncertain`,
    );
  }
  // src/plugin/env.cc: NCCL_ENV_PLUGIN=none (any case) loads none.
  if (ncclBehaviour(nccl.version).envPlugin && named !== '' && named.toLowerCase() !== 'none') {
    notes.push(
      `NCCL_ENV_PLUGIN=${named}: ${version} loads that env plugin, which can set its variables (NCCL_SOCKET_IFNAME too) where nccl-run cannot see them`,
    );
  } else if (envPlugin !== null && named.toLowerCase() !== 'none') {
    notes.push(
      `${envPlugin}: ${version} loads this env plugin, which can set its variables (NCCL_SOCKET_IFNAME too) where nccl-run cannot see them`,
    );
  }
  const oob = ncclView.NCCL_OOB_NET_ENABLE ?? '';
  // null: the version is unknown or older than the records; it may read it.
  const readsOob = parametersOf(nccl.version)?.has('NCCL_OOB_NET_ENABLE') ?? true;
  if (
    readsOob &&
    oob !== '' &&
    Number.parseInt(oob, 10) !== 0 &&
    !Number.isNaN(Number.parseInt(oob, 10))
  ) {
    const devices = env.NCCL_OOB_NET_IFNAME
      ? ` on NCCL_OOB_NET_IFNAME=${env.NCCL_OOB_NET_IFNAME}`
      : '';
    notes.push(
      `NCCL_OOB_NET_ENABLE=${oob}: NCCL's bootstrap goes over its network plugin${devices}, not the socket interface nccl-run models`,
    );
  }
  return notes;
}
