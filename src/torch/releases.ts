/**
 * What nccl-run knows of each torch release, one record per version: the
 * torchrun its job runs (options, spellings, defaults), and torch's rules
 * that decide where the rendezvous' store lives. The code that applies
 * them is beside this file (torchrun-table.ts, torchrun-args.ts,
 * store-host-rule.ts); nothing else names a torch version.
 *
 * Each record was read at the source, pytorch/pytorch by tag
 * (torch/distributed/run.py `get_args_parser()` and `run()`,
 * torch/distributed/elastic/rendezvous/utils.py `_matches_machine_hostname`),
 * and is held to the real libraries: test/e2e/torchrun-parser.test.ts asks
 * Debian 12's torch 1.13, Debian 13's 2.6 and Debian sid's 2.14.1 about
 * every row of test/fixtures/torchrun-rows.ts, and
 * test/e2e/store-host-rule.test.ts runs their store-host rule.
 *
 * Supporting a new torch is one record here, after its predecessor's:
 * write what changed (a new option goes into TORCHRUN_OPTIONS and into the
 * record's list at its place in get_args_parser()), then its rows in the
 * tests above. How its version is found does not change between releases:
 * find-torch.ts reads `__version__` from the package's torch/version.py.
 */

export type OptionType = 'str' | 'int' | 'float';

export interface TorchrunOption {
  /** argparse's dest: the first long option string, dashes turned into underscores. */
  dest: string;
  /** Every option string, in declaration order, as torch 2.x spells them. */
  strings: readonly string[];
  /**
   * value: takes one argument; flag: store_true-like (`check_env`); help:
   * prints help and exits; print: takes one argument, prints and exits
   * (2.14's --print-completion SHELL).
   */
  kind: 'value' | 'flag' | 'help' | 'print';
  /**
   * The option's action is torchrun's `env` or `check_env`
   * (torch/distributed/argparse_util.py), which reads PET_<DEST> as its default.
   */
  pet: boolean;
  type: OptionType;
  choices?: readonly string[];
}

/** An option that takes one argument. */
export function value(
  strings: readonly string[],
  type: OptionType = 'str',
  extra: { pet?: boolean; choices?: readonly string[] } = {},
): TorchrunOption {
  return { dest: destOf(strings), strings, kind: 'value', type, ...extra, pet: extra.pet ?? true };
}

/** A store_true-like option: torchrun's `check_env` (PET_<DEST>), or a plain store_true (`pet: false`). */
export function flag(strings: readonly string[], { pet = true } = {}): TorchrunOption {
  return { dest: destOf(strings), strings, kind: 'flag', pet, type: 'str' };
}

/** argparse `_get_optional_kwargs`: the first long option string, without its dashes, `-` → `_`. */
function destOf(strings: readonly string[]): string {
  const long = strings.find((s) => s.startsWith('--')) ?? (strings[0] as string);
  return long.replace(/^-+/, '').replaceAll('-', '_');
}

/** Every option any release's torchrun has had, by name; a release lists the ones it has. */
export const TORCHRUN_OPTIONS = {
  help: { dest: 'help', strings: ['-h', '--help'], kind: 'help', pet: false, type: 'str' },
  nnodes: value(['--nnodes']),
  nproc_per_node: value(['--nproc-per-node', '--nproc_per_node']),
  rdzv_backend: value(['--rdzv-backend', '--rdzv_backend']),
  rdzv_endpoint: value(['--rdzv-endpoint', '--rdzv_endpoint']),
  rdzv_id: value(['--rdzv-id', '--rdzv_id']),
  rdzv_conf: value(['--rdzv-conf', '--rdzv_conf']),
  standalone: flag(['--standalone']),
  max_restarts: value(['--max-restarts', '--max_restarts'], 'int'),
  monitor_interval: value(['--monitor-interval', '--monitor_interval'], 'float'),
  start_method: value(['--start-method', '--start_method'], 'str', {
    choices: ['spawn', 'fork', 'forkserver'],
  }),
  event_log_handler: value(['--event-log-handler', '--event_log_handler']),
  role: value(['--role']),
  module: flag(['-m', '--module']),
  no_python: flag(['--no-python', '--no_python']),
  run_path: flag(['--run-path', '--run_path']),
  log_dir: value(['--log-dir', '--log_dir']),
  redirects: value(['-r', '--redirects']),
  tee: value(['-t', '--tee']),
  log_line_prefix_template: value(['--log-line-prefix-template', '--log_line_prefix_template']),
  local_ranks_filter: value(['--local-ranks-filter', '--local_ranks_filter']),
  duplicate_stdout_filters: value(['--duplicate-stdout-filters', '--duplicate_stdout_filters']),
  duplicate_stderr_filters: value(['--duplicate-stderr-filters', '--duplicate_stderr_filters']),
  node_rank: value(['--node-rank', '--node_rank'], 'int'),
  master_addr: value(['--master-addr', '--master_addr']),
  master_port: value(['--master-port', '--master_port'], 'int'),
  local_addr: value(['--local-addr', '--local_addr']),
  // Plain argparse actions: no PET_ variable.
  logs_specs: value(['--logs-specs', '--logs_specs'], 'str', { pet: false }),
  // Its choices come from torch.numa.binding.AffinityMode and grow between releases: not checked.
  numa_binding: value(['--numa-binding', '--numa_binding'], 'str', { pet: false }),
  signals_to_handle: value(['--signals-to-handle', '--signals_to_handle']),
  shutdown_timeout: value(['--shutdown-timeout', '--shutdown_timeout'], 'int'),
  virtual_local_rank: flag(['--virtual-local-rank', '--virtual_local_rank']),
  // _PrintCompletionAction: argparse checks the choice, then it prints the script and exits.
  print_completion: {
    dest: 'print_completion',
    strings: ['--print-completion', '--print_completion'],
    kind: 'print',
    pet: false,
    type: 'str',
    choices: ['bash', 'zsh', 'tcsh'],
  },
} as const satisfies Record<string, TorchrunOption>;

export type TorchrunOptionName = keyof typeof TORCHRUN_OPTIONS;

/**
 * torchrun's defaults where the command line, PET_* and the cluster give
 * nothing (run.py; c10d_rendezvous_backend.py DEFAULT_PORT;
 * etcd_rendezvous.py and etcd_rendezvous_backend.py; dynamic_rendezvous.py).
 */
export interface TorchrunDefaults {
  masterAddr: string;
  /**
   * 2.14's parser holds None, and run() sets 29500 only where the job is not
   * made c10d on localhost:0 (TorchRelease.singleNode): the same 29500
   * wherever a static master is read.
   */
  masterPort: number;
  /** --nnodes, as torchrun's parser holds it. */
  nnodes: string;
  /** --node-rank, which only the static backend reads (elastic ones assign ranks). */
  nodeRank: number;
  rdzvBackend: string;
  /** The port a rendezvous endpoint without one gets, per backend; other backends are plugins. */
  endpointPorts: ReadonlyMap<string, number>;
  /** --rdzv-conf last_call_timeout: how long an elastic rendezvous waits once MIN nodes are there. */
  lastCallTimeoutS: number;
  nprocPerNode: string;
}

export interface TorchRelease {
  /** major.minor, as torch.__version__ begins (`2.6.0+debian`, `2.14.1+cu130`). */
  version: string;
  /** What changed from the release before, in a line. */
  changes: string;
  /**
   * torchrun's options, in get_args_parser()'s declaration order (argparse's
   * messages follow it): by name where TORCHRUN_OPTIONS has the option, or
   * the option itself (value(...), flag(...)) where it is new.
   */
  torchrunOptions: readonly (TorchrunOptionName | TorchrunOption)[];
  /**
   * What `python -m torch.distributed.launch` adds to run.py's parser
   * (launch.py parse_args), after its options: the deprecated launcher
   * users still paste.
   */
  launchOptions: readonly (TorchrunOptionName | TorchrunOption)[];
  /** 1.13 spells each option one way, `--master_addr`, never `--master-addr`; 2.x takes both. */
  spellings: 'underscore' | 'dash and underscore';
  defaults: TorchrunDefaults;
  /**
   * What run() makes of a static job (no --rdzv-backend, or `static`) of at
   * most one node with no --rdzv-endpoint and no port: static as given, or
   * (2.14, --master-port defaulting to None) c10d on localhost:0, as
   * --standalone does, its --master-addr unused.
   */
  singleNode: 'static' | 'c10d on localhost:0';
  /**
   * A static rendezvous given --master-port 0: the agent's store binds a
   * port of the kernel's choosing, but the workers are told MASTER_PORT=0
   * and wait for ever (seen in the lab on 1.13, 2.6 and 2.14 alike,
   * pytorch/pytorch#130656); a c10d endpoint at port 0 works there.
   */
  staticPortZero: 'hangs' | 'works';
  /**
   * c10d's store-host rule `_matches_machine_hostname(endpoint host)`: true
   * for `localhost`, a loopback literal, the hostname, its canonical name and
   * an address literal among the hostname's addresses; `byAddress`: also a
   * name whose addresses meet the hostname's (2.x; 1.13 compares a name by
   * name only).
   */
  storeHostByAddress: boolean;
  /**
   * The CPUs `--nproc-per-node cpu` (and `auto` where CUDA sees no GPU)
   * starts a worker for (run.py determine_local_world_size): os.cpu_count(),
   * the online CPUs, or (2.14, torch._utils.cpu_count()) the ones this
   * process's affinity allows.
   */
  cpuCount: 'online' | 'affinity';
}

const TORCHRUN_DEFAULTS: TorchrunDefaults = {
  masterAddr: '127.0.0.1',
  masterPort: 29_500,
  nnodes: '1:1',
  nodeRank: 0,
  rdzvBackend: 'static',
  endpointPorts: new Map([
    ['c10d', 29_400],
    ['etcd', 2_379],
    ['etcd-v2', 2_379],
  ]),
  lastCallTimeoutS: 30,
  nprocPerNode: '1',
};

/** Debian 12's python3-torch: v1.13.1, torch/distributed/run.py. */
export const TORCH_1_13: TorchRelease = {
  version: '1.13',
  changes: 'the oldest release nccl-run knows',
  torchrunOptions: [
    'help',
    'nnodes',
    'nproc_per_node',
    'rdzv_backend',
    'rdzv_endpoint',
    'rdzv_id',
    'rdzv_conf',
    'standalone',
    'max_restarts',
    'monitor_interval',
    'start_method',
    'role',
    'module',
    'no_python',
    'run_path',
    'log_dir',
    'redirects',
    'tee',
    'node_rank',
    'master_addr',
    'master_port',
  ],
  launchOptions: [flag(['--use-env', '--use_env'], { pet: false })],
  spellings: 'underscore',
  defaults: TORCHRUN_DEFAULTS,
  singleNode: 'static',
  staticPortZero: 'hangs',
  storeHostByAddress: false,
  cpuCount: 'online',
};

/** Debian 13's python3-torch: v2.6.0. */
export const TORCH_2_6: TorchRelease = {
  ...TORCH_1_13,
  version: '2.6',
  changes:
    'dash spellings beside the underscore ones; --local-ranks-filter, --local-addr, --logs-specs; the store-host rule also compares a name by its addresses',
  torchrunOptions: [
    'help',
    'nnodes',
    'nproc_per_node',
    'rdzv_backend',
    'rdzv_endpoint',
    'rdzv_id',
    'rdzv_conf',
    'standalone',
    'max_restarts',
    'monitor_interval',
    'start_method',
    'role',
    'module',
    'no_python',
    'run_path',
    'log_dir',
    'redirects',
    'tee',
    'local_ranks_filter',
    'node_rank',
    'master_addr',
    'master_port',
    'local_addr',
    'logs_specs',
  ],
  spellings: 'dash and underscore',
  storeHostByAddress: true,
};

/** Debian sid's python3-torch: v2.14.1. `_matches_machine_hostname` is 2.6's, byte for byte. */
export const TORCH_2_14: TorchRelease = {
  ...TORCH_2_6,
  version: '2.14',
  changes:
    '--event-log-handler, --log-line-prefix-template, --duplicate-std{out,err}-filters, --numa-binding, --signals-to-handle, --shutdown-timeout, --virtual-local-rank, --print-completion; --master-port defaults to None, so a static single-node job with no port is c10d on localhost:0; --nproc-per-node cpu counts the CPUs of its affinity',
  torchrunOptions: [
    'help',
    'nnodes',
    'nproc_per_node',
    'rdzv_backend',
    'rdzv_endpoint',
    'rdzv_id',
    'rdzv_conf',
    'standalone',
    'max_restarts',
    'monitor_interval',
    'start_method',
    'event_log_handler',
    'role',
    'module',
    'no_python',
    'run_path',
    'log_dir',
    'redirects',
    'tee',
    'log_line_prefix_template',
    'local_ranks_filter',
    'duplicate_stdout_filters',
    'duplicate_stderr_filters',
    'node_rank',
    'master_addr',
    'master_port',
    'local_addr',
    'logs_specs',
    'numa_binding',
    'signals_to_handle',
    'shutdown_timeout',
    'virtual_local_rank',
    'print_completion',
  ],
  singleNode: 'c10d on localhost:0',
  cpuCount: 'affinity',
};

/** Oldest first. */
export const TORCH_RELEASES: readonly TorchRelease[] = [TORCH_1_13, TORCH_2_6, TORCH_2_14];
