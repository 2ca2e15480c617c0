/**
 * What a new user types first: --help, --version, and bash completion
 * through the real script yargs writes, completed by the real bash.
 */
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { OPTIONS } from '../../src/options/option-table.js';

const bin = fileURLToPath(new URL('../../bin/nccl-run.js', import.meta.url));
const { version } = JSON.parse(
  readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
);

describe('help, version and completion', () => {
  it('--help shows the commands, the option groups, examples and the argv rule', async () => {
    const { stdout, exitCode } = await execa(bin, ['--help']);
    expect(exitCode).toBe(0);
    for (const part of [
      'nccl-run explain',
      'nccl-run init TEMPLATE',
      'Interface:',
      'Verification:',
      'Launch:',
      '--verify-timeout',
      'Examples:',
      'goes to torchrun\nunchanged',
      'Exit status:',
    ]) {
      expect(stdout).toContain(part);
    }
  });

  it('--help breaks lines between words, never inside one', async () => {
    const { stdout } = await execa(bin, ['--help']);
    const words = new Set(stdout.split(/\s+/));
    for (const spec of Object.values(OPTIONS)) {
      for (const word of spec.describe.split(/\s+/)) expect(words, spec.describe).toContain(word);
    }
  });

  it('--help after a torchrun argument belongs to torchrun (it is not ours there)', async () => {
    const { stdout } = await execa(bin, [
      '--dry-run',
      '--verify',
      'none',
      '--iface',
      'lo',
      'train.py',
      '--help',
    ]);
    expect(stdout.trim().split('\n').at(-1)).toBe('torchrun train.py --help');
  });

  it('--version prints the package version', async () => {
    expect((await execa(bin, ['--version'])).stdout).toBe(version);
  });

  it('bash completes our options from the script `nccl-run completion` prints', async () => {
    // The script calls `nccl-run` by name, as installed on PATH.
    const onPath = mkdtempSync(join(tmpdir(), 'nccl-run-path-'));
    try {
      symlinkSync(bin, join(onPath, 'nccl-run'));
      const script = (await execa(bin, ['completion'])).stdout;
      const { stdout } = await execa(
        'bash',
        [
          '-c',
          `${script}\nCOMP_WORDS=(nccl-run --verify-t); COMP_CWORD=1; _nccl-run_yargs_completions; echo "\${COMPREPLY[@]}"`,
        ],
        {
          env: { PATH: `${onPath}:${process.env.PATH}` },
        },
      );
      expect(stdout.trim()).toBe('--verify-timeout');
    } finally {
      rmSync(onPath, { recursive: true, force: true });
    }
  });
});
