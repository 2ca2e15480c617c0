/**
 * yargs renders --help from the option table and answers shell completion.
 * splitArgv reads the options themselves and settle-options.ts validates them with
 * zod, so one message format covers flags, variables and the env file.
 */
import yargs, { type Argv } from 'yargs';
import { exitStatusSummary } from '../exit-status.js';
import {
  COMMAND_FLAGS,
  commandsOf,
  JOB_COMMANDS,
  OPTIONS,
  type OptionSpec,
} from '../options/option-table.js';

/** The examples --help and the man page show: the command, then what it does. */
export const EXAMPLES = [
  {
    command: 'nccl-run --nnodes=2 --nproc_per_node=8 --master_addr=node01 train.py',
    what: 'resolve, verify the master, run torchrun',
  },
  {
    command: 'nccl-run explain --master_addr=198.18.10.1 --nnodes=2',
    what: 'show the interfaces and why one is chosen',
  },
  {
    command: 'eval "$(nccl-run env --nnodes=2 --master_addr=node01)"',
    what: 'only export the variables',
  },
  { command: 'srun nccl-run check --verify peers', what: 'vet a Slurm allocation before the job' },
  { command: 'nccl-run --iface ens3f0 -- explain', what: 'run a script literally named "explain"' },
] as const;

/** How nccl-run's words and torchrun's are told apart, and where a setting may come from. */
export const ARGUMENT_RULES = [
  'Everything from the first word that is not an nccl-run option (or after --) goes to torchrun',
  'unchanged. Every option can also be set as NCCL_RUN_<NAME> (e.g. NCCL_RUN_IFACE)',
  'or in ./nccl-run.env; precedence: flag > environment > env file > default.',
] as const;

/** Printed below the option groups, as written (yargs would re-wrap it mid-word). */
export const EPILOGUE = `Examples:
${EXAMPLES.map(({ command, what }) => `  ${command}\n      ${what}`).join('\n')}

${ARGUMENT_RULES.join('\n')}

${exitStatusSummary()}`;

/** The command lines, each with what it does: --help's usage and the man page's synopsis. */
export const COMMAND_LINES = [
  {
    synopsis: 'nccl-run [OPTIONS] [--] [TORCHRUN_ARGS...]',
    what: 'resolve, export, verify, launch',
  },
  {
    synopsis: 'nccl-run explain [OPTIONS] [--] [TORCHRUN_ARGS...]',
    what: 'interfaces, decision trace, env, command',
  },
  {
    synopsis: 'nccl-run env [OPTIONS] [--] [TORCHRUN_ARGS...]',
    what: 'only the variables (--format shell|dotenv|json)',
  },
  {
    synopsis: 'nccl-run check [OPTIONS] [--] [TORCHRUN_ARGS...]',
    what: 'resolve and verify, no launch',
  },
  {
    synopsis: 'nccl-run init TEMPLATE [--out PATH] [--force]',
    what: 'slurm, k8s (TrainJob), pytorchjob, lws, docker, compose, env',
  },
  {
    synopsis: 'nccl-run audit [--json] [PATH...|-]',
    what: "read NCCL's own log lines: what each rank used, what is wrong",
  },
  { synopsis: 'nccl-run completion', what: 'bash completion script' },
] as const;

const SYNOPSIS_WIDTH = Math.max(...COMMAND_LINES.map((line) => line.synopsis.length)) + 2;

/** Printed above yargs' option groups: yargs would re-wrap these aligned lines. */
export const USAGE = [
  'Usage:',
  ...COMMAND_LINES.map(({ synopsis, what }) => `  ${synopsis.padEnd(SYNOPSIS_WIDTH)}${what}`),
].join('\n');

export function buildParser(): Argv {
  const parser = yargs([])
    .scriptName('nccl-run')
    .exitProcess(false)
    .help(false)
    .version(false)
    .wrap(Math.min(110, process.stdout.columns || 100));
  const specs: [string, Partial<OptionSpec>][] = [
    ...Object.entries(OPTIONS),
    ...Object.entries(COMMAND_FLAGS),
  ];
  for (const [name, spec] of specs) {
    const choices = spec.choices ? ` [${spec.choices.join('|')}]` : '';
    const commands = commandsOf(spec);
    const only = JOB_COMMANDS.every((command) => commands.includes(command))
      ? ''
      : ` (${commands.join(', ')})`;
    parser.option(name, {
      type: spec.type,
      describe: spec.describe + only + choices,
      group: `${spec.group}:`,
      requiresArg: spec.type === 'string',
      ...(name === 'help' ? { alias: 'h' } : {}),
      defaultDescription: shownDefault(spec),
    });
  }
  parser.completion('completion', false);
  return parser;
}

/** A default worth showing: a word or a list of words; the rest say theirs in words. */
export function shownDefault(spec: Partial<OptionSpec>): string | undefined {
  if (spec.shownDefault !== undefined) return spec.shownDefault;
  if (typeof spec.default === 'string') return spec.default;
  if (Array.isArray(spec.default) && spec.default.length > 0) return spec.default.join(',');
  return undefined;
}
