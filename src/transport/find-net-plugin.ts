/**
 * Which external net plugin NCCL will load (SPEC "RDMA transport": net
 * plugins): the entries NCCL_NET_PLUGIN names under the release's rules
 * (net-plugin-names.ts), each looked up as the dynamic loader finds it in
 * the job's environment (host/find-library.ts), the first found being the
 * one NCCL loads; then what it is (net-plugin-kinds.ts). That NCCL then
 * initialises it, and that the plugin finds its devices, only a run tells.
 */
import { findLibrary, type LibraryVia } from '../host/find-library.js';
import type { NetPluginRecord } from '../host/host-facts.js';
import { readLdSoCache } from '../host/ld-so-cache.js';
import { ncclBehaviour } from '../nccl/behaviour.js';
import {
  NET_PLUGIN_KINDS,
  type NetPluginKind,
  OTHER_PLUGIN,
  recognisePlugin,
} from './net-plugin-kinds.js';
import { type NetPluginEntry, netPluginEntries } from './net-plugin-names.js';

export interface NetPlugin {
  /** The name NCCL dlopen()s that found it, and the file the loader opens. */
  name: string;
  path: string;
  /** Where the loader found it. */
  via: LibraryVia;
  /** The file its links lead to. */
  realPath: string;
  kind: NetPluginKind;
  version: string | null;
}

export interface NetPluginSearch {
  /** NCCL_NET_PLUGIN as NCCL reads it; null when unset. */
  setting: string | null;
  /** The plugins NCCL tries, in order, with the names it dlopen()s. */
  entries: NetPluginEntry[];
  plugin: NetPlugin | null;
  /** What was looked for when nothing was found ("libnccl-net.so"), or why nothing was. */
  notFound: string | null;
}

export interface PluginSearchInput {
  ncclVersion: string | null;
  /** The job's environment (LD_LIBRARY_PATH, and NCCL_NET_PLUGIN where NCCL reads it by getenv). */
  env: Readonly<Record<string, string | undefined>>;
  /** That over NCCL's configuration files, as NCCL reads it. */
  ncclEnv: Readonly<Record<string, string | undefined>>;
  root?: string;
  cwd?: string;
  /**
   * The plugin a `--facts` snapshot's host found (HostFacts.netPlugin): taken
   * as found, never looked for on this machine; undefined where there is no record.
   */
  recorded?: NetPluginRecord | null;
}

export function findNetPlugin(input: PluginSearchInput): NetPluginSearch {
  const rules = ncclBehaviour(input.ncclVersion).netPluginNames;
  // Every release sees NCCL's files here: initEnv setenv()s them first (nccl/releases.ts).
  const setting = input.ncclEnv.NCCL_NET_PLUGIN ?? null;
  const entries = netPluginEntries(setting ?? undefined, rules);
  const root = input.root ?? '';
  if (input.recorded !== undefined) {
    const plugin = input.recorded === null ? null : fromRecord(input.recorded);
    return {
      setting,
      entries,
      plugin,
      notFound: plugin === null ? notFound(entries, setting) : null,
    };
  }
  const view = { env: input.env, root, cwd: input.cwd, cache: readLdSoCache(root) };
  for (const entry of entries) {
    for (const name of entry.names) {
      const found = findLibrary(name, view);
      if (found === null) continue;
      const recognised = recognisePlugin(found.path, root);
      return { setting, entries, plugin: { name, ...found, ...recognised }, notFound: null };
    }
  }
  return { setting, entries, plugin: null, notFound: notFound(entries, setting) };
}

function notFound(entries: readonly NetPluginEntry[], setting: string | null): string {
  const looked = entries.flatMap((entry) => entry.names);
  return looked.length === 0
    ? `NCCL_NET_PLUGIN=${setting} loads no net plugin`
    : `no ${looked.join(', ')} where the loader looks${setting === null ? '' : ` (NCCL_NET_PLUGIN=${setting})`}`;
}

/** What a snapshot records of a found plugin (HostFacts.netPlugin). */
export function pluginRecord(plugin: NetPlugin | null): NetPluginRecord | null {
  return plugin === null ? null : { ...plugin, kind: plugin.kind.id };
}

function fromRecord(record: NetPluginRecord): NetPlugin {
  const kind = NET_PLUGIN_KINDS.find((entry) => entry.id === record.kind) ?? OTHER_PLUGIN;
  return { ...record, kind };
}
