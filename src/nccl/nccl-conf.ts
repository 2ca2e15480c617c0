/**
 * NCCL's own configuration files, whose values are the user's settings too
 * (SPEC "NCCL's own pick"). NVIDIA/nccl src/misc/param.cc initEnv: at its
 * first ncclGetEnv, NCCL reads `$NCCL_CONF_FILE` (from v2.23.4-1; before, and
 * whenever it is unset or empty, `~/.nccl.conf` instead), then
 * `/etc/nccl.conf`, and setenv()s each `KEY=VALUE` line without overwriting:
 * the environment wins over both files, and the first file over the second.
 * Every release reads them (releases.ts NCCL_BEFORE_RECORDS, from v2.3.7-1);
 * which files depends on the release (releases.ts: confFileVariable, confHome).
 *
 * setEnvFile: the key is everything before the first `=`, the value
 * everything after, untrimmed; a line without `=` is skipped, and so (from
 * v2.26) is one starting with `#`, which earlier only set a variable named
 * `#...`, never an NCCL_* one.
 */
import { readFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { attempt } from '../host/attempt.js';
import type { NcclConfFile } from '../host/host-facts.js';
import { ncclBehaviour } from './behaviour.js';

export interface NcclConf {
  /** NCCL_* variables the files set, where the environment does not. */
  values: Record<string, string>;
  /** The file each value came from. */
  origins: Record<string, string>;
  /** The files read, in NCCL's order, with their text: what a snapshot records (HostFacts.ncclConf). */
  files: NcclConfFile[];
}

/**
 * What NCCL `version` (null: the newest) will read from its files, given the
 * job's environment. root: where the file system is mounted ('' for this host).
 * recorded: the files as a snapshot's host read them (a `--facts` replay,
 * SPEC "Causes users meet"): parsed instead of any file here.
 */
export function readNcclConf(
  env: Readonly<Record<string, string | undefined>>,
  version: string | null,
  root = '',
  recorded: readonly NcclConfFile[] | null = null,
): NcclConf {
  if (recorded !== null) return confOf(env, recorded);
  return confOf(env, filesRead(env, version, root));
}

/** The files NCCL `version` reads, in its order, that exist and can be read. */
function filesRead(
  env: Readonly<Record<string, string | undefined>>,
  version: string | null,
  root: string,
): NcclConfFile[] {
  const nccl = ncclBehaviour(version);
  const named = env.NCCL_CONF_FILE ?? '';
  const home = nccl.confHome === 'passwd' ? passwdHome() : env.HOME;
  const first =
    named !== '' && nccl.confFileVariable
      ? named
      : home === undefined
        ? null
        : `${home}/.nccl.conf`;
  const files: NcclConfFile[] = [];
  for (const file of [first, '/etc/nccl.conf']) {
    if (file === null) continue;
    const text = attempt(() => readFileSync(join(root, file), 'utf8'));
    if (text !== undefined) files.push({ file, text });
  }
  return files;
}

/** The values the files set where the environment does not; the first file wins. */
function confOf(
  env: Readonly<Record<string, string | undefined>>,
  files: readonly NcclConfFile[],
): NcclConf {
  const conf: NcclConf = { values: {}, origins: {}, files: [...files] };
  for (const { file, text } of files) {
    for (const [key, value] of parseNcclConf(text)) {
      if (!key.startsWith('NCCL_') || key in conf.values || env[key] !== undefined) continue;
      conf.values[key] = value;
      conf.origins[key] = file;
    }
  }
  return conf;
}

/** setEnvFile's reading of one file, in order. */
export function parseNcclConf(text: string): [string, string][] {
  const entries: [string, string][] = [];
  for (const line of text.split('\n')) {
    const equals = line.indexOf('=');
    if (line.startsWith('#') || equals === -1) continue;
    entries.push([line.slice(0, equals), line.slice(equals + 1, equals + 1 + 1023)]);
  }
  return entries;
}

function passwdHome(): string | undefined {
  return attempt(() => userInfo().homedir);
}
