/**
 * torchrun's argv for the miniature (src/collective/miniature-argv.ts): the
 * job's own options, nccl-run's program in place of the script, and `-m` /
 * `--no-python` (how the job's script runs) dropped.
 */
import { describe, expect, it } from 'vitest';
import { miniatureArgv } from '../../../src/collective/miniature-argv.js';
import { parseTorchrunArgs } from '../../../src/torch/torchrun-args.js';
import { torchrunTable } from '../../../src/torch/torchrun-table.js';

const PROGRAM = ['/tmp/p/collective.py', '--out', '/tmp/p'];

describe('miniatureArgv', () => {
  it.each([
    [
      ['--nnodes', '2', '--nproc-per-node', '8', '--rdzv-backend', 'c10d', 'train.py', '--lr', '1'],
      ['--nnodes', '2', '--nproc-per-node', '8', '--rdzv-backend', 'c10d'],
    ],
    [['--nnodes=2:4', '-m', 'pkg.train', '--epochs', '3'], ['--nnodes=2:4']],
    [
      ['--no-python', '--nnodes', '1', 'bash', 'job.sh'],
      ['--nnodes', '1'],
    ],
    // argparse's abbreviations of them, and 1.13's underscore spelling.
    [
      ['--no_python', '--module', '--nnodes', '1', 'x'],
      ['--nnodes', '1'],
    ],
    [
      ['--no-py', '--nnodes', '1', 'x'],
      ['--nnodes', '1'],
    ],
    // torch 1.13's quirk passes through untouched.
    [
      ['--redirects', '1', '--tee', '1', '--node_rank', '0', 'train.py'],
      ['--redirects', '1', '--tee', '1', '--node_rank', '0'],
    ],
    // A script after `--` keeps the `--`.
    [
      ['--nnodes', '1', '--', '-weird.py'],
      ['--nnodes', '1', '--'],
    ],
    // A script's own `-m` is the script's, and goes with it.
    [
      ['--nnodes', '1', 'train.py', '-m', 'x'],
      ['--nnodes', '1'],
    ],
  ])('%j → options %j, then the program', (argv, options) => {
    const table = torchrunTable('2.6.0');
    expect(miniatureArgv(argv, parseTorchrunArgs(argv, table), table, PROGRAM)).toEqual([
      ...options,
      ...PROGRAM,
    ]);
  });
});
