/**
 * torchrun's options per torch version, as `get_args_parser()` in
 * torch/distributed/run.py declares them, read from each real parser
 * (test/e2e/torchrun-parser.test.ts holds the rows to 1.13's, 2.6's and
 * 2.14's): Debian 12's torch 1.13, Debian 13's 2.6, Debian sid's 2.14.1.
 * - 1.13 has only the underscore spellings (`--master_addr`); 2.x adds the
 *   dash ones (`--master-addr`) to the same options;
 * - 2.6 adds --local-ranks-filter, --local-addr and --logs-specs;
 * - 2.14 adds --event-log-handler, --log-line-prefix-template,
 *   --duplicate-std{out,err}-filters, --numa-binding, --signals-to-handle,
 *   --shutdown-timeout, --virtual-local-rank and --print-completion, and
 *   --master-port defaults to None: run() makes a static job of at most one
 *   node with no endpoint and no port c10d on localhost:0, as --standalone
 *   does, and only then sets the port to 29500.
 * The union of the tables (2.14's: each later table holds the earlier ones'
 * options) reads a torch nccl-run has no table of.
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
  /**
   * value: takes one argument; flag: store_true-like (`check_env`); help:
   * prints help and exits; print: takes one argument, prints and exits
   * (2.14's --print-completion SHELL).
   */
  kind: 'value' | 'flag' | 'help' | 'print';
  pet: boolean;
  type: OptionType;
  choices?: readonly string[];
  /** The first torch version whose torchrun has it. */
  since: TorchTableVersion;
}

/** The torch versions nccl-run has the table of (major.minor). */
export type TorchTableVersion = '1.13' | '2.6' | '2.14';
export const TABLE_VERSIONS: readonly TorchTableVersion[] = ['1.13', '2.6', '2.14'];

function value(
  strings: readonly string[],
  type: OptionType = 'str',
  extra: { pet?: boolean; choices?: readonly string[]; since?: TorchTableVersion } = {},
): TorchrunOption {
  return {
    dest: destOf(strings),
    strings,
    kind: 'value',
    type,
    ...extra,
    pet: extra.pet ?? true,
    since: extra.since ?? '1.13',
  };
}

function flag(strings: readonly string[], since: TorchTableVersion = '1.13'): TorchrunOption {
  return { dest: destOf(strings), strings, kind: 'flag', pet: true, type: 'str', since };
}

/** argparse `_get_optional_kwargs`: the first long option string, without its dashes, `-` → `_`. */
function destOf(strings: readonly string[]): string {
  const long = strings.find((s) => s.startsWith('--')) ?? (strings[0] as string);
  return long.replace(/^-+/, '').replaceAll('-', '_');
}

/** Every option of every table, in 2.14's declaration order (argparse's, which its messages follow). */
const ALL_OPTIONS: readonly TorchrunOption[] = [
  { dest: 'help', strings: ['-h', '--help'], kind: 'help', pet: false, type: 'str', since: '1.13' },
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
  value(['--event-log-handler', '--event_log_handler'], 'str', { since: '2.14' }),
  value(['--role']),
  flag(['-m', '--module']),
  flag(['--no-python', '--no_python']),
  flag(['--run-path', '--run_path']),
  value(['--log-dir', '--log_dir']),
  value(['-r', '--redirects']),
  value(['-t', '--tee']),
  value(['--log-line-prefix-template', '--log_line_prefix_template'], 'str', { since: '2.14' }),
  value(['--local-ranks-filter', '--local_ranks_filter'], 'str', { since: '2.6' }),
  value(['--duplicate-stdout-filters', '--duplicate_stdout_filters'], 'str', { since: '2.14' }),
  value(['--duplicate-stderr-filters', '--duplicate_stderr_filters'], 'str', { since: '2.14' }),
  value(['--node-rank', '--node_rank'], 'int'),
  value(['--master-addr', '--master_addr']),
  value(['--master-port', '--master_port'], 'int'),
  value(['--local-addr', '--local_addr'], 'str', { since: '2.6' }),
  // Plain argparse actions: no PET_ variable.
  value(['--logs-specs', '--logs_specs'], 'str', { pet: false, since: '2.6' }),
  // Its choices come from torch.numa.binding.AffinityMode and grow between releases: not checked.
  value(['--numa-binding', '--numa_binding'], 'str', { pet: false, since: '2.14' }),
  value(['--signals-to-handle', '--signals_to_handle'], 'str', { since: '2.14' }),
  value(['--shutdown-timeout', '--shutdown_timeout'], 'int', { since: '2.14' }),
  flag(['--virtual-local-rank', '--virtual_local_rank'], '2.14'),
  // _PrintCompletionAction: argparse checks the choice, then it prints the script and exits.
  {
    dest: 'print_completion',
    strings: ['--print-completion', '--print_completion'],
    kind: 'print',
    pet: false,
    type: 'str',
    choices: ['bash', 'zsh', 'tcsh'],
    since: '2.14',
  },
];

/** One torch version's torchrun, as nccl-run reads its argv and its defaults. */
export interface TorchrunTable {
  /** The table's torch; null: the union, for a torch nccl-run has no table of. */
  torch: TorchTableVersion | null;
  options: readonly TorchrunOption[];
  /** argparse's `_option_string_actions`: every option string → its option. */
  byString: ReadonlyMap<string, TorchrunOption>;
  byDest: ReadonlyMap<string, TorchrunOption>;
  /**
   * 2.14's run(): --master-port defaults to None, and a static job of at
   * most one node with no endpoint and no port becomes c10d on localhost:0.
   */
  singleNodeC10d: boolean;
}

function table(
  torch: TorchTableVersion | null,
  options: readonly TorchrunOption[],
  singleNodeC10d: boolean,
): TorchrunTable {
  return {
    torch,
    options,
    byString: new Map(options.flatMap((option) => option.strings.map((s) => [s, option] as const))),
    byDest: new Map(options.map((option) => [option.dest, option])),
    singleNodeC10d,
  };
}

const order = (version: TorchTableVersion) => TABLE_VERSIONS.indexOf(version);

/** 1.13 spells each option one way: `--master_addr`, never `--master-addr`. */
const underscoreOnly = (option: TorchrunOption): TorchrunOption => ({
  ...option,
  strings: option.strings.filter((s) => !s.replace(/^-+/, '').includes('-')),
});

export const TORCHRUN_TABLES: Readonly<Record<TorchTableVersion, TorchrunTable>> = {
  '1.13': table(
    '1.13',
    ALL_OPTIONS.filter((option) => option.since === '1.13').map(underscoreOnly),
    false,
  ),
  '2.6': table(
    '2.6',
    ALL_OPTIONS.filter((option) => order(option.since) <= order('2.6')),
    false,
  ),
  '2.14': table('2.14', ALL_OPTIONS, true),
};

/**
 * The union: every option string of every table. Its defaults are 2.6's
 * (static 127.0.0.1:29500), what torchrun did from 1.13 until the None port;
 * readTorchrunTable gives a torch newer than the tables 2.14's rule.
 */
export const UNION_TABLE: TorchrunTable = table(null, ALL_OPTIONS, false);

/**
 * The table for torch.__version__ (`2.6.0+debian`, `1.13.0a0`): its
 * major.minor's, else the union; a torch newer than the newest table keeps
 * that table's single-node rule.
 */
export function torchrunTable(version: string | null): TorchrunTable {
  const [major = Number.NaN, minor = Number.NaN] = (/^(\d+)\.(\d+)/.exec(version ?? '') ?? [])
    .slice(1)
    .map(Number);
  const known = TABLE_VERSIONS.find((v) => v === `${major}.${minor}`);
  if (known !== undefined) return TORCHRUN_TABLES[known];
  const newer = major > 2 || (major === 2 && minor > 14);
  return newer ? { ...UNION_TABLE, singleNodeC10d: true } : UNION_TABLE;
}

/** The PET_ variable torchrun's `env`/`check_env` action reads for this option. */
export function petVariable(option: TorchrunOption): string {
  return `PET_${option.dest.toUpperCase()}`;
}
