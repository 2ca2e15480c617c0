/**
 * What torchrun takes from PET_<DEST> variables (torch/distributed/argparse_util.py):
 * its `env` action makes PET_<DEST> the option's default when the parser is
 * built, so the command line wins and an empty variable still counts (torchrun
 * takes the empty string); its `check_env` action sets a flag when
 * bool(int(PET_<DEST>)) is true.
 */

import { badValue } from '../errors.js';
import type { Setting } from '../origin.js';
import { isPythonFloat, parsePythonInt } from './python-builtins.js';
import type { TorchrunArgs } from './torchrun-args.js';
import { ANY_LAUNCHER_TABLE, petVariable, type TorchrunOption } from './torchrun-table.js';

/** The option's value as torchrun gets it: the command line, else PET_<DEST>; null when neither. */
export function torchrunSetting(
  args: TorchrunArgs,
  env: NodeJS.ProcessEnv,
  dest: string,
): Setting | null {
  const given = args.values.get(dest);
  if (given !== undefined) {
    return { value: given.value, origin: { name: given.optionString, from: 'argv' } };
  }
  const option = optionFor(args, dest);
  // A torchrun without the option (1.13's without --local-addr) reads no PET_ variable for it.
  if (option === undefined) return null;
  const variable = petVariable(option);
  const value = env[variable];
  if (!option.pet || value === undefined) return null;
  return { value, origin: { name: variable, from: 'pet' } };
}

/** A store_true-like flag: on the command line, or PET_<DEST> a non-zero integer. */
export function torchrunFlag(args: TorchrunArgs, env: NodeJS.ProcessEnv, dest: string): boolean {
  if (args.flags.has(dest)) return true;
  const option = optionFor(args, dest);
  if (option === undefined) return false;
  const value = env[petVariable(option)];
  return value !== undefined && (parsePythonInt(value) ?? 0) !== 0;
}

/**
 * Every PET_ value that makes torchrun stop, as a ConfigError. check_env runs
 * bool(int(...)) on each flag's variable while the parser is built, so a bad
 * one stops torchrun even when the flag is on the command line. An `env`
 * value goes through the option's type= only when the command line leaves
 * the option out (argparse converts string defaults at the end of parsing,
 * which --help never reaches).
 */
export function checkTorchrunEnvironment(args: TorchrunArgs, env: NodeJS.ProcessEnv): void {
  for (const option of args.table.options) {
    const variable = petVariable(option);
    const value = env[variable];
    if (!option.pet || value === undefined) continue;
    const origin = { name: variable, from: 'pet' } as const;
    if (option.kind === 'flag' && parsePythonInt(value) === null) {
      throw badValue(origin, value, 'torchrun reads it with int(); expected 0 (off) or 1 (on)');
    }
    if (option.kind !== 'value' || args.help || args.values.has(option.dest)) continue;
    if (option.type === 'int' && parsePythonInt(value) === null) {
      throw badValue(origin, value, 'expected an integer');
    }
    if (option.type === 'float' && !isPythonFloat(value)) {
      throw badValue(origin, value, 'expected a number');
    }
  }
}

/** The option of the argv's table; undefined where only another version's torchrun has it. */
function optionFor(args: TorchrunArgs, dest: string): TorchrunOption | undefined {
  if (!ANY_LAUNCHER_TABLE.byDest.has(dest)) {
    throw new Error(`torchrun has no option with dest '${dest}'`);
  }
  return args.table.byDest.get(dest);
}
