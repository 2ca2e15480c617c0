/**
 * SPEC "Parsing rule": nccl-run's own options run from the start of argv up
 * to the first token that is not one of them, or up to `--`; that token and
 * everything after it belong to torchrun, untouched. A subcommand word counts
 * only as the very first token. After `init TEMPLATE` only init's flags are
 * ours (--out, --force, --help), and init refuses anything else. `audit`
 * takes paths and its own flags in any order (`audit --json logs/`), and
 * every word after `--` is a path.
 *
 * The same walk reads the options' values, so the rule of which tokens are
 * ours lives in one place (yargs only renders --help and completion: building
 * its parser on every run cost ~15 ms of start-up, scripts/bench.js).
 */
import { UsageError } from '../errors.js';
import {
  BOOLEAN_WORDS,
  COMMAND_FLAGS,
  type Command,
  commandsOf,
  OPTIONS,
  SUBCOMMANDS,
  type Subcommand,
} from '../options/option-table.js';

export interface SplitArgv {
  command: Subcommand | 'run';
  /** Positional words of the subcommand (init's TEMPLATE, audit's paths). */
  commandArgs: string[];
  /**
   * nccl-run's own options by name (kebab-case): a string, or true for a
   * boolean flag given bare (`--force=no` keeps its string for its schema).
   */
  flags: Record<string, string | true>;
  /** Everything for torchrun, byte for byte. */
  torchrun: string[];
}

interface Flag {
  name: string;
  type: 'string' | 'boolean';
  commands: readonly Command[];
}

const FLAGS = new Map<string, Flag>(
  Object.entries({ ...OPTIONS, ...COMMAND_FLAGS }).map(([name, spec]) => [
    `--${name}`,
    { name, type: spec.type, commands: commandsOf(spec) },
  ]),
);
FLAGS.set('-h', FLAGS.get('--help') as Flag);

/**
 * init takes only its own flags. A job command (and completion) takes every
 * job option, also one only another command uses: a setting that does nothing
 * here is harmless, as it is from NCCL_RUN_* or an env file shared by all.
 */
function takes(command: SplitArgv['command'], flag: Flag): boolean {
  if (command === 'init' || command === 'audit') return flag.commands.includes(command);
  return flag.commands.some((taker) => taker !== 'init' && taker !== 'audit');
}

export function splitArgv(argv: readonly string[]): SplitArgv {
  let index = 0;
  let command: SplitArgv['command'] = 'run';
  const commandArgs: string[] = [];
  const first = argv[0];
  if (first !== undefined && (SUBCOMMANDS as readonly string[]).includes(first)) {
    command = first as Subcommand;
    index = 1;
    // init and completion take their words before any option: `init slurm --out x`.
    if (command === 'init' || command === 'completion') {
      while (index < argv.length && !(argv[index] as string).startsWith('-')) {
        commandArgs.push(argv[index] as string);
        index += 1;
      }
    }
  }
  const flags: SplitArgv['flags'] = {};
  while (index < argv.length) {
    const token = argv[index] as string;
    if (token === '--') {
      index += 1;
      if (command === 'audit') {
        commandArgs.push(...argv.slice(index));
        index = argv.length;
      }
      break;
    }
    // audit's paths: any word that is not a flag, `-` (standard input) included.
    if (command === 'audit' && (token === '-' || !token.startsWith('-'))) {
      commandArgs.push(token);
      index += 1;
      continue;
    }
    const equals = token.startsWith('--') ? token.indexOf('=') : -1;
    const flag = equals > 0 ? token.slice(0, equals) : token;
    const spec = FLAGS.get(flag);
    if (spec === undefined || !takes(command, spec)) break;
    index += 1;
    if (equals > 0) {
      flags[spec.name] = token.slice(equals + 1);
    } else if (spec.type === 'boolean') {
      flags[spec.name] = true;
      // `--dry-run false` would be dry-run on, and `false` torchrun's first word.
      const next = argv[index];
      if (next !== undefined && next !== '' && BOOLEAN_WORDS.includes(next)) {
        throw new UsageError(
          `--${spec.name} takes no separate value, so '${next}' would be torchrun's first word; write --${spec.name}, or --${spec.name}=${next}`,
        );
      }
    } else {
      // `--iface ens3f0`: the value is the next token, whatever it looks like.
      const value = argv[index];
      if (value === undefined) throw new UsageError(`--${spec.name}: missing value`);
      flags[spec.name] = value;
      index += 1;
    }
  }
  return { command, commandArgs, flags, torchrun: argv.slice(index) };
}
