/**
 * SPEC "Parsing rule": nccl-run's own options run from the start of argv up
 * to the first token that is not one of them, or up to `--`; that token and
 * everything after it belong to torchrun, untouched. A subcommand word counts
 * only as the very first token.
 *
 * The same walk reads the options' values, so the rule of which tokens are
 * ours lives in one place (yargs only renders --help and completion: building
 * its parser on every run cost ~15 ms of start-up, scripts/bench.js).
 */
import { UsageError } from '../errors.js';
import { type OptionSpec, optionForFlag, SUBCOMMANDS, type Subcommand } from './options.js';

export interface SplitArgv {
  command: Subcommand | 'run';
  /** Positional words of the subcommand (init's TEMPLATE). */
  commandArgs: string[];
  /**
   * nccl-run's own options by name (kebab-case): a string, or true for a
   * boolean flag given bare (`--force=no` keeps its string for config.ts).
   */
  flags: Record<string, string | true>;
  /** Everything for torchrun, byte for byte. */
  torchrun: string[];
}

const OUT: OptionSpec = { name: 'out', type: 'string', group: 'Launch', describe: '' };

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
      break;
    }
    const equals = token.startsWith('--') ? token.indexOf('=') : -1;
    const flag = equals > 0 ? token.slice(0, equals) : token;
    const spec = optionForFlag(flag) ?? (command === 'init' && flag === '--out' ? OUT : undefined);
    if (spec === undefined) break;
    index += 1;
    if (equals > 0) {
      flags[spec.name] = token.slice(equals + 1);
    } else if (spec.type === 'boolean') {
      flags[spec.name] = true;
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
