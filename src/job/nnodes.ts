/**
 * --nnodes as torchrun reads it: `parse_min_max_nnodes` in
 * torch/distributed/run.py (`N` or `MIN:MAX`, each through int()), then
 * `assert 0 < min_nodes <= max_nodes` in `config_from_args`.
 */
import { parsePythonInt } from '../torch/python-builtins.js';

export type NnodesReading = { min: number; max: number; problem?: undefined } | { problem: string };

const EXPECTED = 'expected N or MIN:MAX, whole numbers with 0 < MIN <= MAX';

export function readNnodes(text: string): NnodesReading {
  const parts = text.split(':');
  if (parts.length > 2) return { problem: EXPECTED };
  const min = parsePythonInt(parts[0] as string);
  const max = parts.length === 2 ? parsePythonInt(parts[1] as string) : min;
  if (min === null || max === null || !(min > 0 && min <= max)) return { problem: EXPECTED };
  return { min, max };
}
