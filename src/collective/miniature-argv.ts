/**
 * torchrun's argv for the miniature: the job's own options (nodes, rank,
 * processes per node, rendezvous, elastic sizes, --redirects/--tee, ...)
 * exactly as given, then nccl-run's program in place of the script. The
 * program is a .py file that torchrun runs with its own interpreter
 * (sys.executable, the one its #! line names), so `-m` and `--no-python`,
 * which say how to run the job's script, are dropped: with them torchrun
 * would import the program as a module or exec it without Python.
 */
import { parseTorchrunArgs, type TorchrunArgs } from '../torch/torchrun-args.js';
import type { TorchrunTable } from '../torch/torchrun-table.js';

/** The dests of the options that say how the script runs (torch/releases.ts). */
const HOW_THE_SCRIPT_RUNS = new Set(['module', 'no_python']);

export function miniatureArgv(
  torchrunArgv: readonly string[],
  args: Pick<TorchrunArgs, 'scriptIndex'>,
  table: TorchrunTable,
  program: readonly string[],
): string[] {
  const options = torchrunArgv.slice(0, args.scriptIndex ?? torchrunArgv.length);
  return [...options.filter((token) => !saysHowScriptRuns(token, table)), ...program];
}

/** The token alone is `-m`, `--module`, `--no-python` or an abbreviation argparse takes for one. */
function saysHowScriptRuns(token: string, table: TorchrunTable): boolean {
  if (!token.startsWith('-') || token === '--') return false;
  try {
    const alone = parseTorchrunArgs([token, 'program.py'], table);
    return (
      alone.scriptIndex === 1 &&
      alone.values.size === 0 &&
      [...alone.flags.keys()].some((dest) => HOW_THE_SCRIPT_RUNS.has(dest))
    );
  } catch {
    // An option that takes a value: not a flag of how the script runs.
    return false;
  }
}
