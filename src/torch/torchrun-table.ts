/**
 * The torch that will run, as nccl-run applies its record (releases.ts):
 * torchrun's options as argparse holds them (every option string → its
 * option), its defaults and its single-node rule. A torch whose major.minor
 * has a record reads by that record; any other (unknown, or with no record
 * of its own) by the union of every record's options, leniently, with the
 * defaults of the record it follows (releaseFor), or for an unknown torch
 * the oldest's: what torchrun did from 1.13 until 2.14's None port.
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

/** One torch version's torchrun, as nccl-run reads its argv and its defaults. */
export interface TorchrunTable {
  /** The record's version (major.minor); null: the union, for a torch that has no record. */
  torch: string | null;
  options: readonly TorchrunOption[];
  /** argparse's `_option_string_actions`: every option string → its option. */
  byString: ReadonlyMap<string, TorchrunOption>;
  byDest: ReadonlyMap<string, TorchrunOption>;
  defaults: TorchrunDefaults;
  /** TorchRelease.singleNode is 'c10d on localhost:0'. */
  singleNodeC10d: boolean;
}

function table(
  torch: string | null,
  options: readonly TorchrunOption[],
  rules: Pick<TorchRelease, 'defaults' | 'singleNode'>,
): TorchrunTable {
  return {
    torch,
    options,
    byString: new Map(options.flatMap((option) => option.strings.map((s) => [s, option] as const))),
    byDest: new Map(options.map((option) => [option.dest, option])),
    defaults: rules.defaults,
    singleNodeC10d: rules.singleNode === 'c10d on localhost:0',
  };
}

/** An entry of a release's option list: a name of TORCHRUN_OPTIONS, or the option itself. */
function optionOf(entry: TorchRelease['torchrunOptions'][number]): TorchrunOption {
  return typeof entry === 'string' ? TORCHRUN_OPTIONS[entry] : entry;
}

/** The options of a release, spelled as it spells them. */
function releaseOptions(release: TorchRelease): TorchrunOption[] {
  return release.torchrunOptions.map((entry) => {
    const option = optionOf(entry);
    if (release.spellings === 'dash and underscore') return option;
    return {
      ...option,
      strings: option.strings.filter((s) => !s.replace(/^-+/, '').includes('-')),
    };
  });
}

export const TORCHRUN_TABLES: ReadonlyMap<string, TorchrunTable> = new Map(
  TORCH_RELEASES.map((release) => [
    release.version,
    table(release.version, releaseOptions(release), release),
  ]),
);

const OLDEST = TORCH_RELEASES[0] as TorchRelease;

/**
 * Every option of every record, in the newest record's order, then the
 * options only older ones have: what some torch nccl-run knows would accept.
 */
const UNION_OPTIONS: readonly TorchrunOption[] = (() => {
  const byDest = new Map<string, TorchrunOption>();
  for (const release of [...TORCH_RELEASES].reverse()) {
    for (const option of release.torchrunOptions.map(optionOf)) {
      if (!byDest.has(option.dest)) byDest.set(option.dest, option);
    }
  }
  return [...byDest.values()];
})();

/** The union, with the oldest record's defaults: the reading for a torch whose version is unknown. */
export const UNION_TABLE: TorchrunTable = table(null, UNION_OPTIONS, OLDEST);

/**
 * The table for torch.__version__ (`2.6.0+debian`, `1.13.0a0`): its
 * major.minor's record, else the union, with the defaults of the record
 * whose rules it follows (releases.ts releaseFor).
 */
export function torchrunTable(version: string | null): TorchrunTable {
  const release = releaseFor(version);
  if (release === null) return UNION_TABLE;
  return (
    TORCHRUN_TABLES.get(majorMinor(version as string) as string) ??
    table(null, UNION_OPTIONS, release)
  );
}

/** The PET_ variable torchrun's `env`/`check_env` action reads for this option. */
export function petVariable(option: TorchrunOption): string {
  return `PET_${option.dest.toUpperCase()}`;
}
