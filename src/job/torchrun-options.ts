/**
 * torchrun's options, as `get_args_parser()` in torch/distributed/run.py
 * declares them on pytorch/pytorch main. That list is a superset of torch
 * 1.13's, which differs in three ways that matter here:
 * - 1.13 has only the underscore spellings (`--master_addr`); main adds the
 *   dash ones (`--master-addr`) to the same options;
 * - 1.13 lacks --local-addr, --local-ranks-filter, --duplicate-std{out,err}-filters,
 *   --event-log-handler, --logs-specs, --numa-binding, --signals-to-handle,
 *   --shutdown-timeout and --virtual-local-rank;
 * - --master-port's default: 29500 in 1.13 and 2.x; None on the newest main,
 *   whose run() turns None into 29500, or, for a static job of at most one
 *   node with no endpoint, into c10d on localhost:0 as --standalone does.
 *
 * `pet`: the option's action is torchrun's `env` or `check_env`
 * (torch/distributed/argparse_util.py), which reads PET_<DEST> as its default.
 */

export type OptionType = 'str' | 'int' | 'float';

export interface TorchrunOption {
  /** argparse's dest: the first long option string, dashes turned into underscores. */
  dest: string;
  /** Every option string, in declaration order. */
  strings: readonly string[];
  /** value: takes one argument; flag: store_true-like (`check_env`); help: prints help and exits. */
  kind: 'value' | 'flag' | 'help';
  pet: boolean;
  type: OptionType;
  choices?: readonly string[];
}

function value(
  strings: readonly string[],
  type: OptionType = 'str',
  extra: { pet?: boolean; choices?: readonly string[] } = {},
): TorchrunOption {
  return { dest: destOf(strings), strings, kind: 'value', pet: extra.pet ?? true, type, ...extra };
}

function flag(strings: readonly string[]): TorchrunOption {
  return { dest: destOf(strings), strings, kind: 'flag', pet: true, type: 'str' };
}

/** argparse `_get_optional_kwargs`: the first long option string, without its dashes, `-` → `_`. */
function destOf(strings: readonly string[]): string {
  const long = strings.find((s) => s.startsWith('--')) ?? (strings[0] as string);
  return long.replace(/^-+/, '').replaceAll('-', '_');
}

export const TORCHRUN_OPTIONS: readonly TorchrunOption[] = [
  { dest: 'help', strings: ['-h', '--help'], kind: 'help', pet: false, type: 'str' },
  value(['--nnodes']),
  value(['--nproc-per-node', '--nproc_per_node']),
  value(['--rdzv-backend', '--rdzv_backend']),
  value(['--rdzv-endpoint', '--rdzv_endpoint']),
  value(['--rdzv-id', '--rdzv_id']),
  value(['--rdzv-conf', '--rdzv_conf']),
  flag(['--standalone']),
  value(['--max-restarts', '--max_restarts'], 'int'),
  value(['--monitor-interval', '--monitor_interval'], 'float'),
  value(['--start-method', '--start_method'], 'str', {
    choices: ['spawn', 'fork', 'forkserver'],
  }),
  value(['--event-log-handler', '--event_log_handler']),
  value(['--role']),
  flag(['-m', '--module']),
  flag(['--no-python', '--no_python']),
  flag(['--run-path', '--run_path']),
  value(['--log-dir', '--log_dir']),
  value(['-r', '--redirects']),
  value(['-t', '--tee']),
  value(['--local-ranks-filter', '--local_ranks_filter']),
  value(['--duplicate-stdout-filters', '--duplicate_stdout_filters']),
  value(['--duplicate-stderr-filters', '--duplicate_stderr_filters']),
  value(['--node-rank', '--node_rank'], 'int'),
  value(['--master-addr', '--master_addr']),
  value(['--master-port', '--master_port'], 'int'),
  value(['--local-addr', '--local_addr']),
  // Plain argparse actions on main: no PET_ variable.
  value(['--logs-specs', '--logs_specs'], 'str', { pet: false }),
  // Its choices come from torch.numa.binding.AffinityMode and grow between releases: not checked.
  value(['--numa-binding', '--numa_binding'], 'str', { pet: false }),
  value(['--signals-to-handle', '--signals_to_handle']),
  value(['--shutdown-timeout', '--shutdown_timeout'], 'int'),
  flag(['--virtual-local-rank', '--virtual_local_rank']),
];

/** argparse's `_option_string_actions`: every option string → its option. */
export const OPTION_BY_STRING: ReadonlyMap<string, TorchrunOption> = new Map(
  TORCHRUN_OPTIONS.flatMap((option) => option.strings.map((s) => [s, option] as const)),
);

/** The PET_ variable torchrun's `env`/`check_env` action reads for this option. */
export function petVariable(option: TorchrunOption): string {
  return `PET_${option.dest.toUpperCase()}`;
}

export const OPTION_BY_DEST: ReadonlyMap<string, TorchrunOption> = new Map(
  TORCHRUN_OPTIONS.map((option) => [option.dest, option]),
);
