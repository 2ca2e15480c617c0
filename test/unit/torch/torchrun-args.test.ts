import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/errors.js';
import { parseTorchrunArgs } from '../../../src/torch/torchrun-args.js';
import { ROWS } from '../../fixtures/torchrun-rows.js';

describe('parseTorchrunArgs', () => {
  it.each(ROWS)('$why: $argv', (row) => {
    if (row.error !== undefined) {
      expect(() => parseTorchrunArgs(row.argv)).toThrow(UsageError);
      expect(() => parseTorchrunArgs(row.argv)).toThrow(row.error);
      return;
    }
    const parsed = parseTorchrunArgs(row.argv);
    expect(parsed.scriptIndex).toBe(row.script);
    if (row.values !== undefined) {
      expect(Object.fromEntries([...parsed.values].map(([dest, v]) => [dest, v.value]))).toEqual(
        row.values,
      );
    }
    for (const [dest, optionString] of Object.entries(row.spelled ?? {})) {
      expect(parsed.values.get(dest)?.optionString).toBe(optionString);
    }
    if (row.flags !== undefined) expect([...parsed.flags.keys()]).toEqual(row.flags);
    expect(parsed.unrecognized).toEqual(row.unrecognized ?? []);
    expect(parsed.help).toBe(row.help ?? false);
  });

  it('never reads past the script, whatever follows', () => {
    const tail = ['--master-addr', '--', '-mx', '--ma', '--standalone=1', ''];
    const parsed = parseTorchrunArgs(['--nnodes=2', 'train.py', ...tail]);
    expect(parsed.scriptIndex).toBe(1);
    expect([...parsed.values.keys()]).toEqual(['nnodes']);
  });
});
