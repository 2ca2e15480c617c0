/**
 * The names NCCL dlopen()s for its external net plugins, from
 * NCCL_NET_PLUGIN and the release's rules (nccl/releases.ts netPluginNames,
 * read at src/net.cc v2.22.3-1 to v2.25.1-1, src/plugin/plugin_open.cc and
 * src/plugin/net.cc v2.26.2-1, v2.27.3-1, v2.27.5-1, v2.28.3-1 to v2.30.7-1).
 * Each entry is one plugin NCCL tries, with the names it dlopen()s for it
 * in turn; the entries are tried in order, then NCCL's own IB and Socket.
 * An entry that is, without case, a prefix of STATIC_PLUGIN (`s`, `static`)
 * makes tryOpenLib dlopen(NULL), the program itself, in every tag read: that
 * "succeeds", no plugin symbol is in it, and no other name is tried for the
 * entry; nccl-run gives it no name to look for.
 */
import type { NetPluginNames } from '../nccl/releases.js';

export const DEFAULT_NET_PLUGIN = 'libnccl-net.so';

/**
 * NCCL_NET_MAX_PLUGINS (16, src/include/plugin/nccl_net.h) less the two
 * internal ones: a longer list is cut (initPluginLibsOnceFunc).
 */
const MAX_LISTED = 14;
/** MAX_STR_LEN 255 with room for the terminator: a longer entry is ignored. */
const MAX_ENTRY = 254;

export interface NetPluginEntry {
  /** The NCCL_NET_PLUGIN entry, or libnccl-net.so when unset. */
  entry: string;
  /** What NCCL dlopen()s for it, in order. */
  names: string[];
}

/** value: NCCL_NET_PLUGIN as NCCL reads it (undefined when unset). */
export function netPluginEntries(
  value: string | undefined,
  rules: NetPluginNames,
): NetPluginEntry[] {
  if (rules.form === 'single') {
    // openNetPluginLib: `if (envNetPluginName && strlen(envNetPluginName))`.
    if (value === undefined || value === '')
      return [{ entry: DEFAULT_NET_PLUGIN, names: [DEFAULT_NET_PLUGIN] }];
    return [{ entry: value, names: staticPlugin(value) ? [] : [value, `libnccl-net-${value}.so`] }];
  }
  if (value === undefined) return [{ entry: DEFAULT_NET_PLUGIN, names: [DEFAULT_NET_PLUGIN] }];
  if (rules.noneKeyword && value.toLowerCase() === 'none') return [];
  // strtok_r: empty fields vanish.
  const { form } = rules;
  const entries = value
    .split(',')
    .filter((entry) => entry !== '')
    .slice(0, MAX_LISTED)
    .filter((entry) => entry.length <= MAX_ENTRY);
  return entries.map((entry) => ({ entry, names: namesOf(entry, form) }));
}

/** strncasecmp(name, "STATIC_PLUGIN", strlen(name)) == 0 */
function staticPlugin(name: string): boolean {
  return 'STATIC_PLUGIN'.startsWith(name.toUpperCase());
}

function namesOf(entry: string, form: 'list-lib-or-short' | 'list'): string[] {
  const libName = entry.startsWith('lib') && entry.endsWith('.so');
  if (form === 'list-lib-or-short') {
    // v2.27.3-1: "match names that start with 'lib' and end with '.so'" (at least libX.so).
    return libName && entry.length >= 'libX.so'.length ? [entry] : [`libnccl-net-${entry}.so`];
  }
  // v2.27.5-1 on: as named, then libnccl-net-<entry>.so unless a path or a library name.
  if (staticPlugin(entry)) return [];
  return entry.includes('/') || libName ? [entry] : [entry, `libnccl-net-${entry}.so`];
}
