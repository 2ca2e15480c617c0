/**
 * What each NCCL release does that nccl-run models, one record per release
 * that changed something: its interface rules, its configuration files, its
 * env plugin, its bootstrap log line, what it puts in /dev/shm. The code that applies them is beside
 * this file (nccl-pick.ts, nccl-conf.ts, unseen-settings.ts); nothing else
 * names an NCCL version.
 *
 * Each record was read at the source, NVIDIA/nccl at the record's tag
 * (src/misc/socket.cc ncclFindInterfaces, src/os/linux.cc
 * ncclOsFindInterfaces from v2.29, src/misc/param.cc initEnv,
 * src/plugin/env.cc, src/bootstrap.cc, src/include/proxy.h,
 * src/transport/shm.cc), and the interface rules are held to
 * the real libraries by the oracle tier (test/e2e/nccl-oracle.test.ts:
 * 2.22.3 from Debian 13, 2.29.7 from Debian sid).
 *
 * Supporting a new NCCL is one record at the end, with what it changed,
 * and its rows in the tests.
 */
/** How ncclFindInterfaces picks (behaviour.ts names each set by the releases it holds for). */
export interface InterfaceRules {
  /** The lists tried in turn, each until one finds an interface (NCCL_SOCKET_IFNAME unset or one character long). */
  defaultIfnames: readonly string[];
  /** Every address of an interface without IFF_RUNNING (down, or no carrier) is skipped, also under the user's own list. */
  skipsNotRunning: boolean;
}

export interface NcclBehaviour {
  interfaceRules: InterfaceRules;
  /** `$NCCL_CONF_FILE` names the first file (else, and when it is empty, `~/.nccl.conf`). */
  confFileVariable: boolean;
  /** Whose home `~/.nccl.conf` is in: getpwuid(getuid())'s, or $HOME. */
  confHome: 'passwd' | 'HOME';
  /** Loads an env plugin (libnccl-env.so found by dlopen, or NCCL_ENV_PLUGIN's), which answers its getenv. */
  envPlugin: boolean;
  /** The INFO line that names the bootstrap's interface and address (`... Using IF:ADDR<0>`). */
  bootstrapLog: string;
  /** What it puts in /dev/shm beyond the SHM transport's buffers (nccl-shm.ts). */
  shm: NcclShm;
  /**
   * How ncclFindInterfaceMatchSubnet (NCCL_COMM_ID's bootstrap) compares an
   * IPv4 address with the COMM_ID's: `holds`, the first address whose
   * network holds it; `inverted`, the first whose network does not (v2.29.2-1
   * to v2.29.7-1, src/os/linux.cc matchSubnet returns `== ? false : true`;
   * NVIDIA/nccl PR #2047, fixed in v2.30.3-1). IPv6 is compared right in both.
   */
  commIdSubnetMatch: 'holds' | 'inverted';
  /** How NCCL_NET_PLUGIN names the net plugins it tries (transport/net-plugin-rules.ts). */
  netPluginNames: NetPluginNames;
}

/**
 * How NCCL turns NCCL_NET_PLUGIN into the names it dlopen()s (src/net.cc to
 * v2.25, src/plugin/plugin_open.cc and src/plugin/net.cc from v2.26):
 * - `single`: the whole value is one name: dlopen(value), then
 *   dlopen("libnccl-net-<value>.so"); unset or empty, "libnccl-net.so";
 * - `list-lib-or-short` (v2.27.3): a comma list; an entry `lib*.so` is
 *   dlopen()ed as it is, any other as "libnccl-net-<entry>.so" only;
 * - `list` (v2.27.5): a comma list; each entry as it is, then, unless it
 *   holds a `/` or is `lib*.so`, "libnccl-net-<entry>.so"; `none` (any
 *   case) from v2.28.3 means no external plugin (`noneKeyword`).
 */
export interface NetPluginNames {
  form: 'single' | 'list-lib-or-short' | 'list';
  /** NCCL_NET_PLUGIN=none (strcasecmp) loads no external plugin. */
  noneKeyword: boolean;
}

export interface NcclShm {
  /**
   * sizeof(struct ncclProxyOpsPool) (src/include/proxy.h): MAX_OPS_PER_PEER ×
   * NCCL_MAX_LOCAL_RANKS ncclProxyOps, two ints, NCCL_MAX_LOCAL_RANKS ints, a
   * mutex and a condition variable, the struct compiled as the tag declares
   * it (g++, x86-64): 65536 ops of 64, 88, 112, 160, 216 bytes to v2.24;
   * 147456 ops (64 channels, 72 local ranks) of 216, 224, 232 from v2.25.
   */
  proxyOpsPoolBytes: number;
  /**
   * Where the SHM transport's buffers go: /dev/shm always, or cuMem host
   * memory when NCCL_CUMEM_HOST_ENABLE is set (v2.23), or by default with a
   * CUDA 12.6 driver (from v2.24, src/misc/cudawrap.cc).
   */
  cuMemHost: 'never' | 'when-set' | 'by-default';
}

export interface NcclRelease {
  /** The first release (X.Y.Z, its tag vX.Y.Z-1) that does this. */
  version: string;
  changes: string;
  sets: Partial<NcclBehaviour>;
}

/**
 * The oldest release nccl-run models: what NCCL_BEFORE_RECORDS says was read
 * at v2.18.1-1 (src/misc/socket.cc findInterfaces and ncclFindInterfaces,
 * src/misc/param.cc, src/include/proxy.h) and holds to the first record. An
 * older NCCL is named as such, and its picture marked uncertain
 * (unseen-settings.ts).
 */
export const NCCL_OLDEST_MODELLED = '2.18.1';

/**
 * What releases before every record do, from NCCL_OLDEST_MODELLED on.
 *
 * NCCL's configuration files are read by every release (from v2.3.7-1,
 * src/include/param.h initEnv, called by ncclInit, src/init.cu:102; v2.18.6-1
 * src/misc/param.cc:51, src/init.cc:79; v2.22.3-1 src/init.cc:79 and lazily
 * by ncclGetEnv, src/misc/param.cc:85): initEnv setenv()s each line without
 * overwriting before the bootstrap and the net plugin read anything, so
 * plain getenv() sees them too.
 */
export const NCCL_BEFORE_RECORDS: NcclBehaviour = {
  interfaceRules: {
    defaultIfnames: ['ib', '^docker,lo', 'docker', 'lo'],
    skipsNotRunning: false,
  },
  confFileVariable: false,
  confHome: 'passwd',
  envPlugin: false,
  bootstrapLog: 'Bootstrap : Using',
  // Read at v2.18.1-1 .. v2.19.4-1.
  shm: { proxyOpsPoolBytes: 4_194_656, cuMemHost: 'never' },
  // Read at v2.22.3-1 (src/misc/socket.cc: `(local ^ remote) ? false : true`, right) and v2.28.9-1.
  commIdSubnetMatch: 'holds',
  // Read at v2.22.3-1 src/net.cc openNetPluginLib (to v2.25.1-1).
  netPluginNames: { form: 'single', noneKeyword: false },
};

/** Oldest first. */
export const NCCL_RELEASES: readonly NcclRelease[] = [
  {
    version: '2.20.3',
    changes: 'the proxy’s ops pool in /dev/shm grows to 5.5 MiB (read to v2.20.5-1)',
    sets: { shm: { proxyOpsPoolBytes: 5_767_520, cuMemHost: 'never' } },
  },
  {
    version: '2.21.5',
    changes: 'the proxy’s ops pool grows to 7 MiB (read at v2.21.5-1 and v2.22.3-1)',
    sets: { shm: { proxyOpsPoolBytes: 7_340_384, cuMemHost: 'never' } },
  },
  {
    version: '2.23.4',
    changes:
      '$NCCL_CONF_FILE names the first configuration file; the ops pool grows to 10 MiB; the SHM buffers may be cuMem host memory under NCCL_CUMEM_HOST_ENABLE',
    sets: {
      confFileVariable: true,
      shm: { proxyOpsPoolBytes: 10_486_112, cuMemHost: 'when-set' },
    },
  },
  {
    version: '2.24.3',
    changes:
      'the bootstrap logs "Bootstrap: Using" (subsystem BOOTSTRAP); the ops pool grows to 13.5 MiB; the SHM buffers are cuMem host memory by default with a CUDA 12.6 driver',
    sets: {
      bootstrapLog: 'Bootstrap: Using',
      shm: { proxyOpsPoolBytes: 14_156_128, cuMemHost: 'by-default' },
    },
  },
  {
    version: '2.25.1',
    changes: 'the ops pool grows to 30 MiB (64 channels, 72 local ranks)',
    sets: { shm: { proxyOpsPoolBytes: 31_850_880, cuMemHost: 'by-default' } },
  },
  {
    version: '2.26.2',
    changes: 'the ops pool grows to 31.5 MiB (read to v2.27.7-1)',
    sets: {
      shm: { proxyOpsPoolBytes: 33_030_528, cuMemHost: 'by-default' },
    },
  },
  {
    version: '2.27.3',
    changes:
      'NCCL_NET_PLUGIN is a comma list of plugins tried in turn; lib*.so entries as named, others as libnccl-net-<entry>.so',
    sets: {
      netPluginNames: { form: 'list-lib-or-short', noneKeyword: false },
    },
  },
  {
    version: '2.27.5',
    changes:
      'each NCCL_NET_PLUGIN entry is tried as named, then (no / and not lib*.so) as libnccl-net-<entry>.so',
    sets: { netPluginNames: { form: 'list', noneKeyword: false } },
  },
  {
    version: '2.28.3',
    changes:
      'virbr is excluded with docker and lo and tried last; interfaces without IFF_RUNNING are skipped; the ops pool grows to 32.6 MiB (read to v2.30.7-1); NCCL_NET_PLUGIN=none loads no net plugin',
    sets: {
      interfaceRules: {
        defaultIfnames: ['ib', '^docker,lo,virbr', 'docker', 'lo', 'virbr'],
        skipsNotRunning: true,
      },
      shm: { proxyOpsPoolBytes: 34_210_176, cuMemHost: 'by-default' },
      netPluginNames: { form: 'list', noneKeyword: true },
    },
  },
  {
    version: '2.28.7',
    changes: 'an env plugin (libnccl-env.so, NCCL_ENV_PLUGIN) can answer NCCL’s getenv',
    sets: { envPlugin: true },
  },
  {
    version: '2.29.2',
    changes:
      'NCCL_COMM_ID’s subnet match is inverted for IPv4: the bootstrap takes the first address whose network does not hold the COMM_ID’s (read to v2.29.7-1)',
    sets: { commIdSubnetMatch: 'inverted' },
  },
  {
    version: '2.30.3',
    changes:
      '~/.nccl.conf is in $HOME, not the passwd entry’s home; NCCL_COMM_ID’s subnet match is right again (PR #2047)',
    sets: { confHome: 'HOME', commIdSubnetMatch: 'holds' },
  },
];
