/**
 * SPEC "Parsing rule": nccl-run's own options run from the start of argv up
 * to the first token that is not one of them, or up to `--`; that token and
 * everything after it belong to torchrun, untouched. A subcommand word counts
 * only as the very first token.
 */
import { optionForFlag, SUBCOMMANDS, type Subcommand } from './options.js';

export interface SplitArgv {
  command: Subcommand | 'run';
  /** Positional words of the subcommand (init's TEMPLATE). */
  commandArgs: string[];
  /** nccl-run's own tokens, for yargs. */
  own: string[];
  /** Everything for torchrun, byte for byte. */
  torchrun: string[];
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
  const own: string[] = [];
  while (index < argv.length) {
    const token = argv[index] as string;
    if (token === '--') {
      index += 1;
      break;
    }
    const equals = token.indexOf('=');
    const flag = token.startsWith('--') && equals > 0 ? token.slice(0, equals) : token;
    const spec =
      optionForFlag(flag) ?? (command === 'init' && flag === '--out' ? outSpec : undefined);
    if (spec === undefined) break;
    own.push(token);
    index += 1;
    if (spec.type === 'string' && flag === token) {
      // `--iface ens3f0`: the value is the next token, whatever it looks like.
      const value = argv[index];
      if (value !== undefined) {
        own.push(value);
        index += 1;
      }
    }
  }
  return { command, commandArgs, own, torchrun: argv.slice(index) };
}

const outSpec = { name: 'out', type: 'string' } as const;
