/**
 * SPEC "Parsing rule": nccl-run's options end at the first word that is not
 * one of them, so a typo in one (`--ifcae lo`) or one written after
 * torchrun's (`--nproc_per_node=8 --verify-timeout 2s`) would pass to
 * torchrun, which fails on it after the whole pre-flight; and an option
 * torchrun has but nccl-run does not know may take the next word as its value,
 * which nccl-run would read as the training script. Each is a usage error
 * (64) before anything runs, naming the option meant. Words after the script
 * are the script's and are never looked at.
 */
import { UsageError } from '../errors.js';
import { COMMAND_FLAGS, OPTIONS } from '../options/option-table.js';
import { parseTorchrunArgs, type TorchrunArgs } from '../torch/torchrun-args.js';
import { ANY_LAUNCHER_TABLE } from '../torch/torchrun-table.js';
import type { SplitArgv } from './split-argv.js';

const OWN_OPTIONS = Object.keys({ ...OPTIONS, ...COMMAND_FLAGS }).map((name) => `--${name}`);
const TORCHRUN_STRINGS = ANY_LAUNCHER_TABLE.options
  .flatMap((option) => option.strings)
  .filter((string) => string.startsWith('--'));

/** torchrun's part as every known torchrun reads it (the union), once checked. */
export function checkTorchrunPart({ torchrun }: SplitArgv): TorchrunArgs {
  const parsed = parseTorchrunArgs(torchrun, ANY_LAUNCHER_TABLE);
  const end = parsed.scriptIndex ?? torchrun.length;
  const first = torchrun[0];
  for (const token of parsed.unrecognized) {
    const index = torchrun.indexOf(token);
    const name = token.startsWith('--') ? token.split('=', 1)[0] : token;
    if (OWN_OPTIONS.includes(name as string)) {
      throw new UsageError(
        index === 0
          ? `'${name}' is nccl-run's option, but here torchrun would get it (after --, or with a command that does not take it); drop it, or move it before --`
          : `'${name}' is nccl-run's option, but it comes after torchrun's '${first}': nccl-run reads its own options only before torchrun's; move it to the front`,
      );
    }
    const ours = nearest(name as string, OWN_OPTIONS);
    if (ours !== null) {
      throw new UsageError(`unknown option '${name}': did you mean nccl-run's ${ours}?`);
    }
    // argparse gives an unknown option no value, so the next word would be the script.
    const next = index + 1;
    if (!token.includes('=') && next === end && next < torchrun.length) {
      const theirs = nearest(name as string, TORCHRUN_STRINGS);
      throw new UsageError(
        theirs !== null
          ? `unknown option '${name}': did you mean torchrun's ${theirs}?`
          : `torchrun option '${name}' is unknown to the torchrun versions nccl-run knows, so '${torchrun[next]}' after it may be its value or the training script; write ${name}=VALUE, or put -- before the script`,
      );
    }
  }
  return parsed;
}

/**
 * The option meant by a near miss: the same after `_` → `-` and case, or
 * within a small edit distance (one edit for short names, two otherwise).
 */
function nearest(word: string, options: readonly string[]): string | null {
  if (!word.startsWith('--')) return null;
  const normal = (text: string) => text.slice(2).toLowerCase().replaceAll('_', '-');
  const typed = normal(word);
  let best: { option: string; distance: number } | null = null;
  for (const option of options) {
    const distance = editDistance(typed, normal(option));
    if (distance <= (typed.length <= 4 ? 1 : 2) && (best === null || distance < best.distance)) {
      best = { option, distance };
    }
  }
  return best?.option ?? null;
}

/** Optimal string alignment distance: insertions, deletions, substitutions, adjacent swaps. */
function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i += 1) {
    for (let j = 1; j <= b.length; j += 1) {
      const row = rows[i] as number[];
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row[j] = Math.min(
        ((rows[i - 1] as number[])[j] as number) + 1,
        (row[j - 1] as number) + 1,
        ((rows[i - 1] as number[])[j - 1] as number) + cost,
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        row[j] = Math.min(row[j] as number, ((rows[i - 2] as number[])[j - 2] as number) + 1);
      }
    }
  }
  return (rows[a.length] as number[])[b.length] as number;
}
