/**
 * nccl-run's own options (SPEC "Options"), one table used three ways: the
 * argv split (which tokens are ours, and which take a value), the yargs
 * parser and its --help, and the NCCL_RUN_* variables.
 */
export interface OptionSpec {
  /** Flag name without dashes, kebab-case. */
  name: string;
  /** 'boolean' options take no value token. */
  type: 'string' | 'boolean';
  group: 'Interface' | 'Verification' | 'Cluster' | 'NCCL' | 'Launch' | 'Output';
  describe: string;
  choices?: readonly string[];
  /** Shown in --help; the real defaults live in config.ts. */
  defaultDescription?: string;
  /** Accepts no NCCL_RUN_* variable (help/version are per-invocation). */
  flagOnly?: boolean;
}

export const OPTION_SPECS: readonly OptionSpec[] = [
  {
    name: 'iface',
    type: 'string',
    group: 'Interface',
    describe: 'Use this interface (first of a comma list that exists, is up and has an address)',
  },
  {
    name: 'strategy',
    type: 'string',
    group: 'Interface',
    describe: 'The chain of strategies, in order',
    defaultDescription: 'explicit,local,subnet,route,speed',
  },
  {
    name: 'exclude',
    type: 'string',
    group: 'Interface',
    describe:
      'More excludes: name prefixes (docker), exact names (=eth1), CIDR blocks (172.16.0.0/12)',
  },
  {
    name: 'no-default-excludes',
    type: 'boolean',
    group: 'Interface',
    describe: 'Drop the default exclude list (lo docker veth virbr br- cni ...)',
  },
  {
    name: 'family',
    type: 'string',
    group: 'Interface',
    choices: ['auto', 'ipv4', 'ipv6'],
    describe: "Address family; auto follows the master's address, else IPv4",
    defaultDescription: 'auto',
  },
  {
    name: 'facts',
    type: 'string',
    group: 'Interface',
    describe: 'Read host facts from a snapshot (explain --json) instead of this host',
  },
  {
    name: 'verify',
    type: 'string',
    group: 'Verification',
    choices: ['none', 'local', 'master', 'peers'],
    describe: 'How far the pre-flight check goes',
    defaultDescription: 'master',
  },
  {
    name: 'verify-timeout',
    type: 'string',
    group: 'Verification',
    describe: 'How long to wait for the master or peers (500ms, 30s, 2m)',
    defaultDescription: '60s',
  },
  {
    name: 'require-transport',
    type: 'string',
    group: 'Verification',
    choices: ['ib'],
    describe:
      "NCCL's RDMA data plane must be usable (an active port and its /dev/infiniband device file); sets NCCL_NET=IB",
  },
  {
    name: 'peers',
    type: 'string',
    group: 'Verification',
    describe: 'Restrict --verify peers to these hosts (comma list or Slurm hostlist)',
    defaultDescription: 'every node that registers',
  },
  {
    name: 'probe-port',
    type: 'string',
    group: 'Verification',
    describe: 'Port of the peer probe',
    defaultDescription: 'master port + 1',
  },
  {
    name: 'min-bandwidth',
    type: 'string',
    group: 'Verification',
    describe:
      'With --verify peers: fail below this throughput to the next node (500mbit, 10gbit, 2GB/s)',
  },
  {
    name: 'cluster',
    type: 'string',
    group: 'Cluster',
    choices: ['auto', 'slurm', 'k8s', 'none'],
    describe: 'Where to fill in a missing master, port, node count and rank',
    defaultDescription: 'auto',
  },
  {
    name: 'nccl-debug',
    type: 'string',
    group: 'NCCL',
    choices: ['VERSION', 'WARN', 'INFO', 'TRACE'],
    describe: 'Set NCCL_DEBUG',
  },
  {
    name: 'nccl-debug-subsys',
    type: 'string',
    group: 'NCCL',
    describe: 'Set NCCL_DEBUG_SUBSYS (e.g. INIT,NET)',
  },
  {
    name: 'force',
    type: 'boolean',
    group: 'NCCL',
    describe: 'Replace interface variables the user already set',
  },
  {
    name: 'torchrun',
    type: 'string',
    group: 'Launch',
    describe: 'The launcher, split into words without a shell',
    defaultDescription: 'torchrun',
  },
  {
    name: 'env-file',
    type: 'string',
    group: 'Launch',
    describe: 'dotenv file: NCCL_RUN_* keys configure nccl-run, other keys go to torchrun',
    defaultDescription: './nccl-run.env if it exists',
  },
  {
    name: 'dry-run',
    type: 'boolean',
    group: 'Launch',
    describe: 'Do everything but launch; print the command and variables',
  },
  {
    name: 'json',
    type: 'boolean',
    group: 'Output',
    describe: 'Machine output on stdout (explain, env, check)',
  },
  {
    name: 'format',
    type: 'string',
    group: 'Output',
    choices: ['shell', 'dotenv', 'json'],
    describe: 'Output of `env`',
    defaultDescription: 'shell',
  },
  {
    name: 'log-level',
    type: 'string',
    group: 'Output',
    choices: ['trace', 'debug', 'info', 'warn', 'error', 'silent'],
    describe: 'Log level (logs go to stderr)',
    defaultDescription: 'info',
  },
  {
    name: 'log-format',
    type: 'string',
    group: 'Output',
    choices: ['pretty', 'json'],
    describe: 'Log format',
    defaultDescription: 'pretty on a terminal, else json',
  },
  { name: 'help', type: 'boolean', group: 'Output', describe: 'Show help', flagOnly: true },
  {
    name: 'version',
    type: 'boolean',
    group: 'Output',
    describe: 'Show the version',
    flagOnly: true,
  },
];

export const SUBCOMMANDS = ['explain', 'env', 'check', 'init', 'completion'] as const;
export type Subcommand = (typeof SUBCOMMANDS)[number];

/** NCCL_RUN_VERIFY_TIMEOUT for verify-timeout. */
export function envNameOf(optionName: string): string {
  return `NCCL_RUN_${optionName.toUpperCase().replaceAll('-', '_')}`;
}

const byFlag = new Map<string, OptionSpec>();
for (const spec of OPTION_SPECS) byFlag.set(`--${spec.name}`, spec);
byFlag.set('-h', OPTION_SPECS.find((s) => s.name === 'help') as OptionSpec);

export function optionForFlag(flag: string): OptionSpec | undefined {
  return byFlag.get(flag);
}
