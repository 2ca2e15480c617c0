/**
 * torchrun's argv read the way its argparse parser reads it (CPython
 * Lib/argparse.py `_parse_optional`, `_get_option_tuples`,
 * `consume_optional`, over one torch version's options, torchrun-table.ts),
 * up to the training script: the first positional. Everything from the
 * script on is the script's, and is never looked at, even when it looks like
 * torchrun's or nccl-run's flags.
 *
 * An option string of another torch version's table (`--master-addr` to
 * torch 1.13, `--log-line-prefix-template` to 2.6) is read as that version
 * reads it and listed in `otherVersions`: the installed torchrun stops at it
 * ("unrecognized arguments") whatever nccl-run makes of it, and reading its
 * value keeps the word after it from passing for the script.
 */
import { badValue, UsageError } from '../errors.js';
import { isPythonFloat, parsePythonInt } from './python-builtins.js';
import {
  type TorchrunOption,
  type TorchrunTable,
  torchrunTable,
  UNION_TABLE,
} from './torchrun-table.js';

export interface GivenValue {
  value: string;
  /** The option string argparse matched: the full spelling, also for an abbreviation. */
  optionString: string;
}

export interface TorchrunArgs {
  /** dest → the value given on the command line; the last one wins, as with argparse's store. */
  values: ReadonlyMap<string, GivenValue>;
  /** dest → the option string of each flag given (`--standalone`, `-m`, `--no-python`, ...). */
  flags: ReadonlyMap<string, string>;
  /** Where the training script is in argv; null when there is none (empty argv, trailing `--`, --help). */
  scriptIndex: number | null;
  /** Option-like tokens torchrun does not know: its argparse takes no value for them, then fails. */
  unrecognized: string[];
  /** -h/--help (or 2.14's --print-completion): argparse prints and exits there, reading nothing after it. */
  help: boolean;
  /** The table the argv was read with. */
  table: TorchrunTable;
  /** Option strings only another torch version's torchrun has (see above), as given. */
  otherVersions: string[];
  /**
   * Abbreviations that match several option strings of one option (2.x's
   * `--nproc`): read here as that option, though argparse refuses them.
   */
  ambiguous: { token: string; strings: string[] }[];
}

interface OptionMatch {
  option: TorchrunOption | null;
  optionString: string;
  /** The value attached with `=`, or glued to a short option (`-r3`); null when none. */
  attached: string | null;
  /** Every option string an abbreviation matched, where it matched more than one (all of one option). */
  ambiguousWith?: string[];
}

/** argparse `_negative_number_matcher` (Python 3.11): such tokens are positionals. */
const NEGATIVE_NUMBER = /^-\d+$|^-\d*\.\d+$/;

export function parseTorchrunArgs(
  argv: readonly string[],
  table: TorchrunTable = UNION_TABLE,
): TorchrunArgs {
  const values = new Map<string, GivenValue>();
  const flags = new Map<string, string>();
  const unrecognized: string[] = [];
  const otherVersions: string[] = [];
  const ambiguous: TorchrunArgs['ambiguous'] = [];
  const result = (scriptIndex: number | null, help = false): TorchrunArgs => ({
    values,
    flags,
    scriptIndex,
    unrecognized,
    help,
    table,
    otherVersions,
    ambiguous,
  });
  const matchOption = (token: string): OptionMatch | null => {
    const own = matchIn(token, table);
    if (own === null || own.option !== null || table.torch === null) return own;
    const other = attempt(() => matchIn(token, torchrunTable(null, table.entry)));
    if (other?.option == null) return own;
    otherVersions.push(token);
    return other;
  };

  let index = 0;
  while (index < argv.length) {
    const token = argv[index] as string;
    // argparse: every token after the first `--` is a positional.
    if (token === '--') return result(index + 1 < argv.length ? index + 1 : null);
    let match = matchOption(token);
    if (match === null) return result(index);
    if (match.ambiguousWith !== undefined) ambiguous.push({ token, strings: match.ambiguousWith });
    index += 1;
    if (match.option === null) {
      unrecognized.push(token);
      continue;
    }
    // consume_optional: one-letter flags may be glued together and end in an
    // option that takes a value (`-mh`, `-mr3`, `-mr 3`). Help takes effect
    // only once the whole run has been read, as argparse acts after the loop.
    let help = false;
    for (;;) {
      const option = match.option as TorchrunOption;
      if (option.kind === 'value' || option.kind === 'print') {
        let value = match.attached;
        if (value === null) {
          value = argv[index] ?? null;
          // The next token must be an argument ('A' in argparse's pattern), not `--` or an option.
          if (value === null || value === '--' || peekOption(value, table) !== null) {
            throw new UsageError(
              `torchrun argument ${match.optionString}: expected one argument${value === null ? '' : `, got '${value}'`}`,
            );
          }
          index += 1;
        }
        if (!help) checkType(option, match.optionString, value);
        values.set(option.dest, { value, optionString: match.optionString });
        if (option.kind === 'print') help = true;
        break;
      }
      if (option.kind === 'help') help = true;
      else flags.set(option.dest, match.optionString);
      if (match.attached === null) break;
      match = gluedOption(token, match, match.attached, table);
    }
    if (help) return result(null, true);
  }
  return result(null);
}

/** Whether argparse takes `token` for an option ('O' in its pattern): an ambiguous one is one too. */
function peekOption(token: string, table: TorchrunTable): OptionMatch | null {
  try {
    return matchIn(token, table);
  } catch {
    return { option: null, optionString: token, attached: null };
  }
}

function attempt<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}

/** argparse `_parse_optional`: null for a positional; option null for an unknown option. */
function matchIn(token: string, table: TorchrunTable): OptionMatch | null {
  if (token === '' || !token.startsWith('-')) return null;
  const exact = table.byString.get(token);
  if (exact !== undefined) return { option: exact, optionString: token, attached: null };
  if (token.length === 1) return null;

  const equals = token.indexOf('=');
  if (equals !== -1) {
    const name = token.slice(0, equals);
    const option = table.byString.get(name);
    if (option !== undefined)
      return { option, optionString: name, attached: token.slice(equals + 1) };
  }

  const candidates = token.startsWith('--')
    ? longPrefixMatches(token, table)
    : shortMatches(token, table);
  if (new Set(candidates.map((c) => c.option)).size > 1) {
    throw new UsageError(
      `torchrun argument ${token}: ambiguous abbreviation, torchrun stops with "could match ${candidates.map((c) => c.optionString).join(', ')}"; write the option in full`,
    );
  }
  // argparse itself counts option strings, not options: with torch >= 2's two
  // spellings, `--nproc` "could match --nproc-per-node, --nproc_per_node" and
  // torchrun stops, while torch 1.13 (one spelling) takes it. Read as the
  // option, so that an unknown torch's argv is read leniently; a known
  // torch's refusal is certainRefusal's.
  const [first] = candidates;
  if (first !== undefined) {
    return candidates.length > 1
      ? { ...first, ambiguousWith: candidates.map((c) => c.optionString) }
      : first;
  }

  if (NEGATIVE_NUMBER.test(token)) return null;
  if (token.includes(' ')) return null;
  return { option: null, optionString: token, attached: null };
}

/** `--pre[=value]`: every long option string that starts with `--pre` (allow_abbrev). */
function longPrefixMatches(token: string, table: TorchrunTable): OptionMatch[] {
  const equals = token.indexOf('=');
  const prefix = equals === -1 ? token : token.slice(0, equals);
  const attached = equals === -1 ? null : token.slice(equals + 1);
  const matches: OptionMatch[] = [];
  for (const [optionString, option] of table.byString) {
    if (optionString.startsWith(prefix)) matches.push({ option, optionString, attached });
  }
  return matches;
}

/**
 * `-r3`: a one-letter option with its value glued on. (argparse would also
 * match single-dash option strings longer than two characters by prefix;
 * torchrun has none.)
 */
function shortMatches(token: string, table: TorchrunTable): OptionMatch[] {
  const optionString = token.slice(0, 2);
  const option = table.byString.get(optionString);
  return option === undefined ? [] : [{ option, optionString, attached: token.slice(2) }];
}

/** The option glued after a one-letter flag: `-mr3` → `-r` with `3`. */
function gluedOption(
  token: string,
  flag: OptionMatch,
  attached: string,
  table: TorchrunTable,
): OptionMatch {
  if (flag.optionString.startsWith('--') || attached === '') {
    throw new UsageError(
      `torchrun argument ${token}: ${flag.optionString} takes no value, got '${attached}'`,
    );
  }
  const optionString = `-${attached[0]}`;
  const option = table.byString.get(optionString);
  if (option === undefined) {
    throw new UsageError(
      `torchrun argument ${token}: ${flag.optionString} takes no value, and ${optionString} is not a torchrun option`,
    );
  }
  return { option, optionString, attached: attached.slice(1) || null };
}

/** argparse's `type=` and `choices=`, applied to a value from the command line. */
function checkType(option: TorchrunOption, optionString: string, value: string): void {
  const ok =
    option.type === 'int'
      ? parsePythonInt(value) !== null
      : option.type === 'float'
        ? isPythonFloat(value)
        : true;
  if (!ok) {
    throw badValue(
      { name: optionString, from: 'argv' },
      value,
      `expected ${option.type === 'int' ? 'an integer' : 'a number'}`,
    );
  }
  if (option.choices !== undefined && !option.choices.includes(value)) {
    throw badValue(
      { name: optionString, from: 'argv' },
      value,
      `expected one of ${option.choices.join(', ')}`,
    );
  }
}

/**
 * What the torch that will run refuses of this argv for certain, where its
 * record is known (table.torch): its argparse stops with "unrecognized
 * arguments" at an option only another torch version has (1.13 at
 * `--master-addr`) or one no torch has, and with "ambiguous option" at an
 * abbreviation of several of its option strings (2.x's `--nproc`, which
 * both spellings of --nproc-per-node match). A UsageError (64) naming the
 * option and this torch's spelling; null where it takes the argv, asks for
 * help, or the torch is unknown (then torchrun gives its own verdict).
 */
export function certainRefusal(args: TorchrunArgs, torch: string): UsageError | null {
  const { table } = args;
  if (table.torch === null || args.help) return null;
  const who = `torch ${torch}'s ${table.entry === 'launch' ? 'torch.distributed.launch' : 'torchrun'}`;
  const [ambiguous] = args.ambiguous;
  if (ambiguous !== undefined) {
    return new UsageError(
      `torchrun argument ${ambiguous.token}: ${who} stops at it with "ambiguous option: could match ${ambiguous.strings.join(', ')}"; write the option in full`,
    );
  }
  const refused = [...args.otherVersions, ...args.unrecognized];
  if (refused.length === 0) return null;
  const named = refused.map((token) => {
    const name = token.split('=', 1)[0] as string;
    const union = torchrunTable(null, table.entry);
    const option = union.byString.get(name) ?? attempt(() => matchIn(name, union))?.option ?? null;
    const own = option === null ? undefined : table.byDest.get(option.dest)?.strings.at(-1);
    return own === undefined ? name : `${name} (its spelling: ${own})`;
  });
  return new UsageError(
    `torchrun argument ${named.join(', ')}: ${who} has no such option and would stop at ${refused.length === 1 ? 'it' : 'them'} with "unrecognized arguments"${named.some((name) => name.includes('its spelling')) ? '; write its spelling' : ''}`,
  );
}
