/**
 * nccl-run's options (SPEC "Options"), each described once: its flag, the
 * zod schema that turns a raw string into its value, the value when nothing
 * gives one, its --help group and text, and which commands take it. From
 * this table come the argv split (cli/split-argv.ts), --help and completion
 * (cli/parser.ts), the NCCL_RUN_* names, the env-file keys, and the
 * `Options` type; the type checker rejects an entry whose default is not
 * one of its schema's values.
 */
import { accessSync, constants, existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname, resolve as resolvePath } from 'node:path';
import * as z from 'zod/mini';
import '../zod-english.js';
import { SCHEDULER_NAMES } from '../cluster/schedulers.js';
import { expandHostlist } from '../cluster/slurm-hostlist.js';
import { CHECK_NAMES, type CheckName, isCheckName } from '../readiness/check-names.js';
import { STRATEGY_NAMES, type StrategyName } from '../resolve/decision.js';
import { parseExcludeRule } from '../resolve/excludes.js';
import { DEFAULT_CHAIN } from '../resolve/strategies/index.js';
import { REQUIRED_TRANSPORTS } from '../transport/transport-requirement.js';
import { parseDuration } from './duration.js';
import { parseRate } from './rate.js';
import { VERIFY_LEVELS } from './verify-level.js';

/** The commands that run a job's resolution; `init` only writes a file. */
export const JOB_COMMANDS = ['run', 'explain', 'env', 'check'] as const;
export type Command = (typeof JOB_COMMANDS)[number] | 'init' | 'audit';
export const SUBCOMMANDS = ['explain', 'env', 'check', 'init', 'audit', 'completion'] as const;
export type Subcommand = (typeof SUBCOMMANDS)[number];

export type OptionGroup = 'Interface' | 'Verification' | 'Cluster' | 'NCCL' | 'Launch' | 'Output';

export interface OptionSpec<S extends z.ZodMiniType = z.ZodMiniType> {
  /** 'boolean' options take no value token (`--force`, or `--force=no`). */
  type: 'string' | 'boolean';
  group: OptionGroup;
  describe: string;
  /** Turns the raw flag, variable or env-file text into the value; its message says what is valid. */
  schema: S;
  /** The value when no flag, variable or env-file entry gives one; without one, null. */
  default?: z.output<S>;
  /** How --help shows the default, where it is not a word or a list of words. */
  shownDefault?: string;
  choices?: readonly string[];
  /** The commands it is for (--help says so); every job command when not said. */
  commands?: readonly Command[];
}

/** An option with a default, checked against its schema's values. */
export function option<S extends z.ZodMiniType>(
  spec: OptionSpec<S> & Required<Pick<OptionSpec<S>, 'default'>>,
): typeof spec {
  return spec;
}

/** An option that is null unless given. */
function optional<S extends z.ZodMiniType>(
  spec: Omit<OptionSpec<S>, 'default'>,
): OptionSpec<S> & { default?: undefined } {
  return spec;
}

const TRUE_WORDS = ['1', 'true', 'yes', 'on'] as const;
const FALSE_WORDS = ['0', 'false', 'no', 'off', ''] as const;
/** The words a boolean option's value may be (`--force=no`). */
export const BOOLEAN_WORDS: readonly string[] = [...TRUE_WORDS, ...FALSE_WORDS];
const bool = z.union(
  [
    z.boolean(),
    z.pipe(
      z.enum([...TRUE_WORDS, ...FALSE_WORDS]),
      z.transform((v) => (TRUE_WORDS as readonly string[]).includes(v)),
    ),
  ],
  {
    error: `expected a boolean: ${TRUE_WORDS.join(', ')} or ${FALSE_WORDS.filter(Boolean).join(', ')} (or empty)`,
  },
);

/** A flag that takes no value; false unless given. */
const flag = (group: OptionGroup, describe: string, commands?: readonly Command[]) =>
  option({ type: 'boolean', group, describe, schema: bool, default: false, commands });

/** One of a few words, listed once for the schema, its message and --help. */
export const oneOf = <const T extends readonly [string, ...string[]]>(
  choices: T,
  { caseless = false } = {},
) => {
  const schema = z.enum(choices, { error: `expected one of ${choices.join(', ')}` });
  return {
    type: 'string' as const,
    choices,
    schema: caseless
      ? z.pipe(
          z.pipe(
            z.string(),
            z.transform((v: string) => v.toUpperCase()),
          ),
          schema,
        )
      : schema,
  };
};

/** A comma list, trimmed, empty items dropped. */
const commaList = () =>
  z.pipe(
    z.string(),
    z.transform((value: string) =>
      value
        .split(',')
        .map((item) => item.trim())
        .filter((item) => item !== ''),
    ),
  );

/** A value read from the text; what the reader throws is the issue's message (zod/mini's transform has no addIssue: it goes on the payload). */
const readWith = <T>(read: (text: string) => T) =>
  z.pipe(
    z.string(),
    z.transform((value: string, payload) => {
      try {
        return read(value);
      } catch (error) {
        payload.issues.push({ code: 'custom', message: (error as Error).message, input: value });
        return z.NEVER;
      }
    }),
  );

/** A reader from a parser that returns null for what it cannot read. */
const orExpected =
  <T>(parse: (text: string) => T | null, expected: string) =>
  (text: string): T => {
    const value = parse(text);
    if (value === null) throw new Error(expected);
    return value;
  };

const strategyList = z.pipe(
  commaList().check(
    z.superRefine((names, ctx) => {
      const valid = STRATEGY_NAMES.join(', ');
      if (names.length === 0)
        ctx.addIssue({ code: 'custom', message: `expected a comma list of ${valid}` });
      for (const name of names) {
        if (!(STRATEGY_NAMES as readonly string[]).includes(name))
          ctx.addIssue({ code: 'custom', message: `unknown strategy '${name}'; valid: ${valid}` });
      }
      const repeated = names.find((name, i) => names.indexOf(name) !== i);
      if (repeated)
        ctx.addIssue({ code: 'custom', message: `strategy '${repeated}' is listed twice` });
    }),
  ),
  z.transform((names) => names as StrategyName[]),
);

/** Readiness checks by name; an unknown one is refused naming the valid ones. */
const checkList = z.pipe(
  commaList().check(
    z.superRefine((names, ctx) => {
      for (const name of names) {
        if (!isCheckName(name))
          ctx.addIssue({
            code: 'custom',
            message: `unknown check '${name}'; valid: ${CHECK_NAMES.join(', ')}`,
          });
      }
    }),
  ),
  z.transform((names) => names as CheckName[]),
);

const port = z
  .pipe(z.string().check(z.regex(/^\d+$/, 'expected a port number 1-65535')), z.transform(Number))
  .check(z.refine((n) => n >= 1 && n <= 65535, 'expected a port number 1-65535'));

const path = z.string().check(z.minLength(1, 'expected a file path'));

/**
 * --nccl-log's folder, absolute, made if missing: NCCL opens DIR/%h.%p.log
 * itself and, when it cannot, writes to stdout without a word (debug.cc
 * ncclDebugInit at every tag read, v2.18.6-1 to v2.29.7-1), so the folder
 * must be there before the job, also when `env` prints the variables for it.
 */
function logDirectory(text: string): string {
  if (text === '') throw new Error("expected a folder for NCCL's log files");
  const dir = resolvePath(text);
  try {
    makeFolders(dir);
    accessSync(dir, constants.W_OK);
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new Error(`expected a folder that exists or can be made, and is writable (${reason})`);
  }
  return dir;
}

/**
 * mkdir -p, one level at a time from the nearest folder that is there: Node's
 * own recursive mkdirSync never returns for a path under /proc (it retries
 * the ENOENT there), and a bad --nccl-log must end in one line.
 */
function makeFolders(dir: string): void {
  if (existsSync(dir)) {
    if (!statSync(dir).isDirectory()) throw Object.assign(new Error(), { code: 'ENOTDIR' });
    return;
  }
  const parent = dirname(dir);
  if (parent !== dir) makeFolders(parent);
  mkdirSync(dir);
}

export const OPTIONS = {
  iface: option({
    type: 'string',
    group: 'Interface',
    describe: 'Use this interface (first of a comma list that exists, is up and has an address)',
    schema: commaList(),
    default: [],
  }),
  strategy: option({
    type: 'string',
    group: 'Interface',
    describe: 'The chain of strategies, in order',
    schema: strategyList,
    default: [...DEFAULT_CHAIN],
  }),
  exclude: option({
    type: 'string',
    group: 'Interface',
    describe:
      'More excludes: name prefixes (docker), exact names (=eth1), CIDR blocks (172.16.0.0/12)',
    schema: commaList().check(
      z.superRefine((entries, ctx) => {
        for (const entry of entries) {
          try {
            parseExcludeRule(entry);
          } catch (error) {
            ctx.addIssue({ code: 'custom', message: (error as Error).message });
          }
        }
      }),
    ),
    default: [],
  }),
  'no-default-excludes': flag(
    'Interface',
    'Drop the default exclude list (lo docker veth virbr br- cni ...)',
  ),
  family: option({
    ...oneOf(['auto', 'ipv4', 'ipv6']),
    group: 'Interface',
    describe: "Address family; auto follows the master's address, else IPv4",
    default: 'auto',
  }),
  'network-status': optional({
    type: 'string',
    group: 'Interface',
    describe:
      "Kubernetes: the pod's annotations as the downward API mounts them; the network Multus attached beside the pod network is the data network",
    schema: path,
    shownDefault: 'none',
  }),
  facts: optional({
    type: 'string',
    group: 'Interface',
    describe: 'Read host facts from a snapshot (explain --json) instead of this host',
    schema: path,
  }),
  verify: option({
    ...oneOf(VERIFY_LEVELS),
    group: 'Verification',
    describe: 'How far the pre-flight check goes',
    default: 'master',
  }),
  /** Milliseconds. */
  'verify-timeout': option({
    type: 'string',
    group: 'Verification',
    describe: 'How long to wait for the master or peers (500ms, 30s, 2m)',
    schema: readWith(orExpected(parseDuration, 'expected a duration such as 500ms, 30s, 2m')),
    default: 60_000,
    shownDefault: '60s',
  }),
  'require-transport': optional({
    ...oneOf(REQUIRED_TRANSPORTS),
    group: 'Verification',
    describe:
      "NCCL's data plane must be RDMA: ib (IB/RoCE verbs: an active port and its /dev/infiniband device file), efa (AWS EFA through the aws-ofi-nccl net plugin), rdma (either); sets the NCCL_NET that makes NCCL fail instead of falling back to sockets",
    commands: ['run', 'explain', 'check'],
  }),
  /** The hosts, expanded from a comma list or Slurm hostlist. */
  peers: optional({
    type: 'string',
    group: 'Verification',
    describe: 'Restrict --verify peers to these hosts (comma list or Slurm hostlist)',
    schema: readWith(expandHostlist),
    shownDefault: 'every node that registers',
  }),
  'probe-port': optional({
    type: 'string',
    group: 'Verification',
    describe:
      'Port where the nodes meet for the peer probe, on the store host, before torchrun binds it',
    schema: port,
    shownDefault: 'the master port',
  }),
  'probe-secret-file': optional({
    type: 'string',
    group: 'Verification',
    describe:
      'A secret every node of the job can read (a Kubernetes Secret): only nodes that have it register and mesh with --verify peers',
    schema: path,
    shownDefault: 'none: membership by the job token alone',
  }),
  /** Megabits per second. */
  'min-bandwidth': optional({
    type: 'string',
    group: 'Verification',
    describe:
      'With --verify peers: fail below this throughput to the next node (500mbit, 10gbit, 2GB/s)',
    schema: readWith(
      orExpected(parseRate, 'expected a rate with its unit, such as 500mbit, 10gbit, 2GB/s'),
    ),
    commands: ['run', 'check'],
  }),
  /** Megabits per second, as --min-bandwidth. */
  'min-bus-bandwidth': optional({
    type: 'string',
    group: 'Verification',
    describe:
      "With --verify collective: fail below this bus bandwidth of the collective's all-reduce (nccl-tests' busbw: 500mbit, 10gbit, 2GB/s)",
    schema: readWith(
      orExpected(parseRate, 'expected a rate with its unit, such as 500mbit, 10gbit, 2GB/s'),
    ),
    commands: ['run', 'check'],
  }),
  'skip-check': option({
    type: 'string',
    group: 'Verification',
    describe: `Readiness checks not to run (${CHECK_NAMES.join(', ')})`,
    schema: checkList,
    default: [],
  }),
  cluster: option({
    ...oneOf(['auto', ...SCHEDULER_NAMES, 'none']),
    group: 'Cluster',
    describe: 'Where to fill in a missing master, port, node count and rank',
    default: 'auto',
  }),
  'nccl-debug': optional({
    ...oneOf(['VERSION', 'WARN', 'INFO', 'TRACE'], { caseless: true }),
    group: 'NCCL',
    describe: 'Set NCCL_DEBUG',
  }),
  'nccl-debug-subsys': optional({
    type: 'string',
    group: 'NCCL',
    describe: 'Set NCCL_DEBUG_SUBSYS (e.g. INIT,NET)',
    schema: z.string().check(z.minLength(1, 'expected a comma list such as INIT,NET')),
  }),
  'nccl-log': optional({
    type: 'string',
    group: 'NCCL',
    describe:
      "The job's NCCL writes its INFO lines to DIR/%h.%p.log (NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS=INIT,BOOTSTRAP,NET,ENV, NCCL_DEBUG_FILE), stdout untouched, for `nccl-run audit DIR`",
    schema: readWith(logDirectory),
  }),
  force: flag(
    'NCCL',
    'Replace interface variables the user already set; with init, an existing file',
    [...JOB_COMMANDS, 'init'],
  ),
  torchrun: option({
    type: 'string',
    group: 'Launch',
    describe: 'The launcher, split into words without a shell',
    schema: z
      .pipe(
        z.string(),
        z.transform((v: string) => v.trim().split(/\s+/).filter(Boolean)),
      )
      .check(
        z.refine(
          (words) => words.length > 0,
          'expected a command such as torchrun or "python3 -m torch.distributed.run"',
        ),
      ),
    default: ['torchrun'],
  }),
  /** As torch.__version__ begins: major.minor, or more (2.6, 2.6.0, 2.14.1+cu130). */
  'torch-version': optional({
    type: 'string',
    group: 'Launch',
    describe:
      "The torch the job runs, where nccl-run cannot read it through the launcher (a SIF image, a site's wrapper script)",
    schema: z.pipe(
      z.string(),
      z.transform((value: string, payload) => {
        const version = value.trim();
        if (/^\d+\.\d+(\.\d+)?([+a-z].*)?$/i.test(version)) return version;
        payload.issues.push({
          code: 'custom',
          message: 'expected a torch version such as 2.6 or 2.14.1',
          input: value,
        });
        return z.NEVER;
      }),
    ),
    shownDefault: "read from the launcher's files",
  }),
  /** The path as given; settle-options.ts resolves it and finds ./nccl-run.env. */
  'env-file': optional({
    type: 'string',
    group: 'Launch',
    describe: 'dotenv file: NCCL_RUN_* keys configure nccl-run, other keys go to torchrun',
    schema: path,
    shownDefault: './nccl-run.env if it exists',
  }),
  'dry-run': flag('Launch', 'Do everything but launch; print the command and variables', ['run']),
  json: flag('Output', 'Machine output on stdout', ['explain', 'env', 'check', 'audit']),
  format: option({
    ...oneOf(['shell', 'dotenv', 'json']),
    group: 'Output',
    describe: 'How the variables are written',
    default: 'shell',
    commands: ['env'],
  }),
  'log-level': option({
    ...oneOf(['trace', 'debug', 'info', 'warn', 'error', 'silent']),
    group: 'Output',
    describe: 'Log level (logs go to stderr)',
    default: 'info',
  }),
  // Text wherever stderr goes: a Slurm .out file, `kubectl logs` and `docker
  // logs` are read by people, between torchrun's and NCCL's own plain lines.
  'log-format': option({
    ...oneOf(['text', 'json']),
    group: 'Output',
    describe:
      'text: one plain line per event (coloured only on a terminal); json: one object per line, for collectors',
    default: 'text',
  }),
};

/** Flags of one invocation, never a setting: no NCCL_RUN_* variable or env-file key. */
export const COMMAND_FLAGS = {
  help: {
    type: 'boolean',
    group: 'Output',
    describe: 'Show help',
    commands: [...JOB_COMMANDS, 'init', 'audit'],
  },
  version: {
    type: 'boolean',
    group: 'Output',
    describe: 'Show the version',
    commands: [...JOB_COMMANDS, 'init', 'audit'],
  },
  out: {
    type: 'string',
    group: 'Launch',
    describe: 'Where the template is written',
    shownDefault: 'stdout',
    commands: ['init'],
  },
  'port-range': {
    type: 'string',
    group: 'Launch',
    describe:
      'Write net.ipv4.ip_local_port_range LOW-HIGH into the template: the ports NCCL and Gloo listen on',
    commands: ['init'],
  },
} as const satisfies Record<string, Omit<OptionSpec, 'schema' | 'default'>>;

export type OptionName = keyof typeof OPTIONS;

type CamelCase<S extends string> = S extends `${infer Head}-${infer Tail}`
  ? `${Head}${Capitalize<CamelCase<Tail>>}`
  : S;
/** The schema's values, and null for an option without a default. */
type ValueOf<O> = O extends { schema: infer S extends z.ZodMiniType }
  ? z.output<S> | (O extends { default: unknown } ? never : null)
  : never;

/** The settled options, by the camelCase of each flag (verify-timeout → verifyTimeout). */
export type Options = {
  -readonly [K in OptionName as CamelCase<K>]: ValueOf<(typeof OPTIONS)[K]>;
};

export function camelCase<K extends string>(name: K): CamelCase<K> {
  return name.replace(/-(.)/g, (_, letter: string) => letter.toUpperCase()) as CamelCase<K>;
}

/** NCCL_RUN_VERIFY_TIMEOUT for verify-timeout. */
export function envNameOf(name: string): string {
  return `NCCL_RUN_${name.toUpperCase().replaceAll('-', '_')}`;
}

/** The commands an option or command flag is taken by. */
export function commandsOf(spec: { commands?: readonly Command[] }): readonly Command[] {
  return spec.commands ?? JOB_COMMANDS;
}
