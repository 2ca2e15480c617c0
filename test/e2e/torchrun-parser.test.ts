/**
 * The torchrun argv table (test/fixtures/torchrun-rows.ts) against torchrun's
 * own parsers: torch 1.13's for every row marked `torch113`, torch 2.6's
 * (Debian 13) and 2.14's (Debian sid) for every row, with the rows marked
 * `torch2` (and, for 2.6, `torch26`) checked to still differ as they say. One Python process per torch asks
 * `torch.distributed.run.get_args_parser()` about every argv
 * (test/fixtures/torchrun-parser.py, through test/lab/torch-parser.ts).
 */
import { beforeAll, expect, it } from 'vitest';
import { parseTorchrunArgs } from '../../src/torch/torchrun-args.js';
import { ROWS, type TorchrunRow } from '../fixtures/torchrun-rows.js';
import { tier } from '../lab/tier.js';
import {
  askTorchParser,
  type ParserReport,
  type TorchVersion,
  torchRoot,
} from '../lab/torch-parser.js';

/** What torchrun-parser.py reports for one argv. */
type Answer =
  | { exit: number; message: string }
  | {
      values: Record<string, string>;
      flags: string[];
      spelled: Record<string, string>;
      script: string;
      scriptIndex: number;
    };

/** nccl-run's message for an error row (the unit test holds it to the row's pattern). */
function ourMessage(argv: string[]): string {
  try {
    parseTorchrunArgs(argv);
  } catch (error) {
    return (error as Error).message;
  }
  return '';
}

/** The options an ambiguity message names after "could match". */
const candidates = (message: string) =>
  (/could match ([^"]*)/.exec(message)?.[1] ?? '').split(/,\s*/).filter(Boolean);

/** How argparse words each kind of refusal nccl-run's rows name. */
const REFUSALS: [ours: RegExp, argparse: RegExp][] = [
  [/ambiguous/, /ambiguous option: /],
  [/expected one argument/, /expected one argument/],
  // torch 1.13 (Python 3.11): "ignored explicit argument 'x'"; 2.6 (3.13): "unrecognized arguments: -x".
  [/takes no value/, /ignored explicit argument|unrecognized arguments: /],
  [/expected an integer/, /invalid int value: /],
  [/expected a number/, /invalid float value: /],
  [/expected one of/, /invalid choice: /],
  [/bad value/, /invalid \w+ value: |invalid choice: /],
];

/** How the real parser's answer differs from the row; [] when it agrees. */
function disagreements(row: TorchrunRow, answer: Answer): string[] {
  const refuses = (why: RegExp, exit = 2): string[] =>
    'exit' in answer && answer.exit === exit && why.test(answer.message)
      ? []
      : [`expected exit ${exit} matching ${why}, got ${JSON.stringify(answer)}`];
  if (row.error !== undefined) {
    const kind = REFUSALS.find(([ours]) => ours.test(row.error?.source ?? ''));
    if (kind === undefined) return [`no argparse wording known for ${row.error}`];
    const found = refuses(kind[1]);
    if (found.length > 0 || !kind[1].source.startsWith('ambiguous') || !('exit' in answer)) {
      return found;
    }
    const ours = candidates(ourMessage(row.argv));
    return candidates(answer.message)
      .filter((option) => !ours.includes(option))
      .map((option) => `torch names ${option} as a candidate, nccl-run does not`);
  }
  // 2.14's --print-completion exits there too: 0 with the script where shtab is installed, 1 without.
  const noShtab = 'exit' in answer && answer.exit === 1 && answer.message.includes("'shtab'");
  if (row.help && noShtab) return [];
  if (row.help) return refuses(/^$/, 0);
  if (row.unrecognized?.length) {
    return refuses(new RegExp(`unrecognized arguments: ${row.unrecognized.join(' ')}$`));
  }
  if (row.script === null) return refuses(/the following arguments are required: training_script/);
  if ('exit' in answer) return [`expected a parse, got ${JSON.stringify(answer)}`];
  const found: string[] = [];
  const same = (what: string, theirs: unknown, ours: unknown) => {
    if (JSON.stringify(theirs) !== JSON.stringify(ours)) {
      found.push(`${what}: torch ${JSON.stringify(theirs)}, row ${JSON.stringify(ours)}`);
    }
  };
  const sorted = (record: Record<string, string>) =>
    Object.fromEntries(Object.entries(record).sort());
  same('values', sorted(answer.values), sorted(row.values ?? {}));
  same('flags', answer.flags, [...(row.flags ?? [])].sort());
  for (const [dest, option] of Object.entries(row.spelled ?? {})) {
    same(`spelling of ${dest}`, answer.spelled[dest], option);
  }
  same('script index', answer.scriptIndex, row.script);
  same('script', answer.script, row.argv[row.script ?? -1]);
  return found;
}

const TIERS: { version: TorchVersion; rows: TorchrunRow[] }[] = [
  { version: '1.13', rows: ROWS.filter((row) => row.torch113) },
  { version: '2.6', rows: ROWS },
  { version: '2.14', rows: ROWS },
];

for (const { version, rows } of TIERS) {
  const root = torchRoot(version);
  tier(
    `torch ${version}'s own parser agrees with the argv table`,
    'error' in root ? root.error : null,
    () => {
      let report: ParserReport<Answer>;
      beforeAll(async () => {
        if ('error' in root) return;
        report = await askTorchParser<Answer>(
          root.path,
          [],
          ROWS.map((row) => row.argv),
        );
      }, 180_000);

      it(`is torch ${version}`, () => {
        expect(report.torch).toMatch(new RegExp(`^${version.replace('.', '\\.')}\\.`));
      });

      it.each(rows)('$why: $argv', (row) => {
        const answer = report.results[ROWS.indexOf(row)] as Answer;
        const found = disagreements(row, answer);
        const differs = row.torch2 ?? (version === '2.6' ? row.torch26 : undefined);
        if (version !== '1.13' && differs !== undefined) {
          // A known difference: it must still be there, or the row's note is stale.
          expect(found, `torch ${version} now agrees; drop the row's torch2`).not.toEqual([]);
        } else {
          expect(found, `torch ${report.torch} (Python ${report.python})`).toEqual([]);
        }
      });
    },
  );
}
