/**
 * SPEC "Parsing rule": a typo of nccl-run's options, one of them written
 * after torchrun's, or a torchrun option nccl-run cannot place whose value
 * could be read as the script, is a usage error before anything runs.
 * Everything else in torchrun's part passes, as torchrun has the last word.
 */
import { describe, expect, it } from 'vitest';
import { checkTorchrunPart } from '../../../src/cli/misplaced-options.js';
import { splitArgv } from '../../../src/cli/split-argv.js';
import { UsageError } from '../../../src/errors.js';

const check = (argv: string[]) => () => checkTorchrunPart(splitArgv(argv));

describe('checkTorchrunPart', () => {
  it.each([
    [
      'a typo of an nccl-run option',
      ['--ifcae', 'lo', '--nnodes=2', 'train.py'],
      "unknown option '--ifcae': did you mean nccl-run's --iface?",
    ],
    [
      'underscores for dashes',
      ['--dry_run', 'train.py'],
      "unknown option '--dry_run': did you mean nccl-run's --dry-run?",
    ],
    [
      'a typo with =value',
      ['--verify-timout=2s', 'train.py'],
      "unknown option '--verify-timout': did you mean nccl-run's --verify-timeout?",
    ],
    [
      'an nccl-run option after a torchrun option',
      ['--nproc_per_node=2', '--verify-timeout', '2s', 'train.py'],
      "'--verify-timeout' is nccl-run's option, but it comes after torchrun's '--nproc_per_node=2': nccl-run reads its own options only before torchrun's; move it to the front",
    ],
    [
      'an nccl-run option after --',
      ['--', '--iface', 'lo', 'train.py'],
      "'--iface' is nccl-run's option, but here torchrun would get it (after --, or with a command that does not take it); drop it, or move it before --",
    ],
    [
      "init's option with the run command",
      ['--out', 'x', 'train.py'],
      "'--out' is nccl-run's option, but here torchrun would get it (after --, or with a command that does not take it); drop it, or move it before --",
    ],
    [
      'a typo of a torchrun option whose value would be the script',
      ['--nnodse', '2', 'train.py'],
      "unknown option '--nnodse': did you mean torchrun's --nnodes?",
    ],
    [
      'an option no known torchrun has (a torch newer than the tables), before a word',
      ['--trace-export-dir', '[x]', '--nnodes=2', 'train.py'],
      "torchrun option '--trace-export-dir' is unknown to the torchrun versions nccl-run knows, so '[x]' after it may be its value or the training script; write --trace-export-dir=VALUE, or put -- before the script",
    ],
  ])('%s: 64', (_name, argv, message) => {
    expect(check(argv)).toThrow(UsageError);
    expect(check(argv)).toThrow(message);
  });

  it.each([
    ['torchrun options and the script', ['--nnodes=2', '--nproc-per-node', '8', 'train.py']],
    [
      "torch 2.14's --log-line-prefix-template and its value",
      ['--log-line-prefix-template', '[x]', '--nnodes=2', 'train.py'],
    ],
    ['an unknown option with =value', ['--trace-export-dir=[x]', 'train.py']],
    ['an unknown flag before another option', ['--trace-export', '--nnodes=2', 'train.py']],
    ['an unknown flag before --', ['--trace-export', '--', 'train.py']],
    ['our options after the script are the script’s', ['train.py', '--iface', 'x', '--ifcae']],
    ['an unknown option far from any of ours', ['--frobnicate=1', 'train.py']],
    ['nothing', []],
  ])('%s: passes', (_name, argv) => {
    expect(check(argv)).not.toThrow();
  });
});
