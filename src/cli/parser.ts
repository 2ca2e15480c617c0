/**
 * The yargs parser of nccl-run's own tokens (what splitArgv left for us):
 * help, version, completion and the value checks yargs is good at. Values are
 * validated by config.ts with zod, so one message format covers flags,
 * variables and the env file. Built in a function so tests parse without exiting.
 */
import yargs, { type Argv } from 'yargs';
import { UsageError } from '../errors.js';
import { OPTION_SPECS } from './options.js';

/** Printed below the option groups, as written (yargs would re-wrap it mid-word). */
export const EPILOGUE = `Examples:
  nccl-run --nnodes=2 --nproc-per-node=8 --master-addr=node01 train.py
      resolve, verify the master, run torchrun
  nccl-run explain --master-addr=198.18.10.1 --nnodes=2
      show the interfaces and why one is chosen
  eval "$(nccl-run env --nnodes=2 --master-addr=node01)"
      only export the variables
  srun nccl-run check --verify peers
      vet a Slurm allocation before the job
  nccl-run --iface ens3f0 -- explain
      run a script literally named "explain"

Everything from the first word that is not an nccl-run option (or after --) goes to torchrun
unchanged. Every option can also be set as NCCL_RUN_<NAME> (e.g. NCCL_RUN_IFACE)
or in ./nccl-run.env; precedence: flag > environment > env file > default.

Exit status: torchrun's own; 128+N if it died of signal N; 64 bad command line;
68 master name does not resolve; 69 no usable interface; 75 master or peer
unreachable; 78 bad configuration; 126/127 launcher not executable/not found.`;

/** Printed above yargs' option groups: yargs would re-wrap these aligned lines. */
export const USAGE = [
  'Usage:',
  '  nccl-run [OPTIONS] [--] [TORCHRUN_ARGS...]          resolve, export, verify, launch',
  '  nccl-run explain [OPTIONS] [--] [TORCHRUN_ARGS...]  interfaces, decision trace, env, command',
  '  nccl-run env [OPTIONS] [--] [TORCHRUN_ARGS...]      only the variables (--format shell|dotenv|json)',
  '  nccl-run check [OPTIONS] [--] [TORCHRUN_ARGS...]    resolve and verify, no launch',
  '  nccl-run init TEMPLATE [--out PATH] [--force]       slurm, k8s, docker, compose, env',
  '  nccl-run completion                                 bash completion script',
].join('\n');

export function buildParser(): Argv {
  const parser = yargs([])
    .scriptName('nccl-run')
    .exitProcess(false)
    .help(false)
    .version(false)
    .strict()
    .wrap(Math.min(110, process.stdout.columns || 100))
    .parserConfiguration({
      'boolean-negation': false,
      'camel-case-expansion': false,
      'dot-notation': false,
      'duplicate-arguments-array': false,
      'parse-numbers': false,
      'parse-positional-numbers': false,
      'short-option-groups': false,
    })
    .fail((message, error) => {
      if (error instanceof UsageError) throw error;
      const missing = /Not enough arguments following: (\S+)/.exec(message ?? '');
      throw new UsageError(missing ? `--${missing[1]}: missing value` : message || String(error));
    });
  for (const spec of OPTION_SPECS) {
    const choices = spec.choices ? ` [${spec.choices.join('|')}]` : '';
    parser.option(spec.name, {
      type: spec.type,
      describe: spec.describe + choices,
      group: `${spec.group}:`,
      requiresArg: spec.type === 'string',
      ...(spec.name === 'help' ? { alias: 'h' } : {}),
      ...(spec.defaultDescription ? { defaultDescription: spec.defaultDescription } : {}),
    });
  }
  parser.option('out', {
    type: 'string',
    describe: 'Where `init` writes the template (default: stdout)',
    group: 'Launch:',
    requiresArg: true,
  });
  parser.completion('completion', false);
  return parser;
}

/** Parses nccl-run's own tokens into kebab-case flags. */
export function parseOwnFlags(own: readonly string[]): Record<string, unknown> {
  const parsed = buildParser().parseSync([...own]) as Record<string, unknown>;
  const flags: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(parsed)) {
    if (key !== '_' && key !== '$0' && value !== undefined) flags[key] = value;
  }
  return flags;
}
