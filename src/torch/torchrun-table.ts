/**
 * The torch that will run, as nccl-run applies its record (releases.ts):
 * torchrun's options as argparse holds them (every option string → its
 * option), its defaults and its rules. A torch whose major.minor has a
 * record reads by that record, and its parser's refusals are certain
 * (torchrun-args.ts certainRefusal); any other reads by the union of every
 * record's options, leniently: a torch with no record of its own by the
 * rules of the record it follows (releaseFor), an unknown torch by the
 * newest record's, what current images ship (issue 28; the plan says so in
 * one warning where the job depends on them).
 */
import { majorMinor } from '../version-order.js';
import { releaseFor } from './release-for.js';
import {
  TORCH_RELEASES,
  TORCHRUN_OPTIONS,
  type TorchRelease,
  type TorchrunDefaults,
  type TorchrunOption,
} from './releases.js';

export type { OptionType, TorchrunOption } from './releases.js';

/** Which of torch's launchers the job runs: torchrun (run.py), or the deprecated launch.py. */
export type TorchEntry = 'run' | 'launch';

/** One torch version's torchrun, as nccl-run reads its argv and its defaults. */
export interface TorchrunTable {
  /** The record's version (major.minor); null: the union, for a torch that has no record. */
  torch: string | null;
  entry: TorchEntry;
  options: readonly TorchrunOption[];
  /** argparse's `_option_string_actions`: every option string → its option. */
  byString: ReadonlyMap<string, TorchrunOption>;
  byDest: ReadonlyMap<string, TorchrunOption>;
  defaults: TorchrunDefaults;
  /** TorchRelease.singleNode is 'c10d on localhost:0'. */
  singleNodeC10d: boolean;
  staticPortZero: TorchRelease['staticPortZero'];
}

type Rules = Pick<TorchRelease, 'defaults' | 'singleNode' | 'staticPortZero'>;

function table(
  torch: string | null,
  entry: TorchEntry,
  options: readonly TorchrunOption[],
  rules: Rules,
): TorchrunTable {
  return {
    torch,
    entry,
    options,
    byString: new Map(options.flatMap((option) => option.strings.map((s) => [s, option] as const))),
    byDest: new Map(options.map((option) => [option.dest, option])),
    defaults: rules.defaults,
    singleNodeC10d: rules.singleNode === 'c10d on localhost:0',
    staticPortZero: rules.staticPortZero,
  };
}

/** An entry of a release's option list: a name of TORCHRUN_OPTIONS, or the option itself. */
function optionOf(entry: TorchRelease['torchrunOptions'][number]): TorchrunOption {
  return typeof entry === 'string' ? TORCHRUN_OPTIONS[entry] : entry;
}

/** The options of a release's launcher, spelled as the release spells them. */
function releaseOptions(release: TorchRelease, entry: TorchEntry): TorchrunOption[] {
  const entries = [
    ...release.torchrunOptions,
    ...(entry === 'launch' ? release.launchOptions : []),
  ];
  return entries.map((name) => {
    const option = optionOf(name);
    if (release.spellings === 'dash and underscore') return option;
    return {
      ...option,
      strings: option.strings.filter((s) => !s.replace(/^-+/, '').includes('-')),
    };
  });
}

function tablesOf(entry: TorchEntry): ReadonlyMap<string, TorchrunTable> {
  return new Map(
    TORCH_RELEASES.map((release) => [
      release.version,
      table(release.version, entry, releaseOptions(release, entry), release),
    ]),
  );
}

/** Each record's torchrun (run.py), by major.minor. */
export const TORCHRUN_TABLES: ReadonlyMap<string, TorchrunTable> = tablesOf('run');
const LAUNCH_TABLES = tablesOf('launch');

const NEWEST = TORCH_RELEASES.at(-1) as TorchRelease;

/**
 * Every option of every record, in the newest record's order, then the
 * options only older ones have: what some torch nccl-run knows would accept.
 */
function unionOptions(entry: TorchEntry): TorchrunOption[] {
  const byDest = new Map<string, TorchrunOption>();
  for (const release of [...TORCH_RELEASES].reverse()) {
    const names = [
      ...release.torchrunOptions,
      ...(entry === 'launch' ? release.launchOptions : []),
    ];
    for (const option of names.map(optionOf)) {
      if (!byDest.has(option.dest)) byDest.set(option.dest, option);
    }
  }
  return [...byDest.values()];
}

/** The union with the newest record's rules: the reading for a torch whose version is unknown. */
export const UNION_TABLE: TorchrunTable = table(null, 'run', unionOptions('run'), NEWEST);
/** The same for launch.py, whose options are run.py's and more: what any launcher nccl-run knows takes. */
export const ANY_LAUNCHER_TABLE: TorchrunTable = table(
  null,
  'launch',
  unionOptions('launch'),
  NEWEST,
);

/**
 * The table for torch.__version__ (`2.6.0+debian`, `1.13.0a0`) and its
 * launcher: its major.minor's record, else the union, with the rules of the
 * record it follows (releaseFor), or the newest's for an unknown torch.
 */
export function torchrunTable(version: string | null, entry: TorchEntry = 'run'): TorchrunTable {
  const release = releaseFor(version);
  const union = entry === 'run' ? UNION_TABLE : ANY_LAUNCHER_TABLE;
  if (release === null) return union;
  const exact = (entry === 'run' ? TORCHRUN_TABLES : LAUNCH_TABLES).get(
    majorMinor(version as string) as string,
  );
  return exact ?? table(null, entry, union.options, release);
}

/** The PET_ variable torchrun's `env`/`check_env` action reads for this option. */
export function petVariable(option: TorchrunOption): string {
  return `PET_${option.dest.toUpperCase()}`;
}
