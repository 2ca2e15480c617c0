/**
 * SPEC "Outputs": `env --format shell` is safe to eval. Checked against the
 * real shells users eval it in: every value must come back byte for byte.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { formatEnv } from '../../src/env/format-env.js';

const VALUES_PER_SHELL = 200;

const nastyChar = fc.constantFrom(
  "'",
  '"',
  '`',
  '\\',
  '$',
  '$(',
  '${',
  '!',
  '#',
  '*',
  '?',
  '~',
  ';',
  '&',
  '|',
  '<',
  '>',
  ' ',
  '\t',
  '\n',
  '\r',
  'a',
  'Z',
  '0',
  '=',
  '^',
  'é',
  'ß',
  '日本',
  '😀',
  '\u00a0',
  '\u200b',
);
const value = fc.oneof(
  fc.array(nastyChar, { maxLength: 16 }).map((chars) => chars.join('')),
  fc.string({ unit: 'binary', maxLength: 24 }).filter((v) => !v.includes('\0')),
  fc.string({ unit: 'binary-ascii', maxLength: 24 }).filter((v) => !v.includes('\0')),
);

const workdir = mkdtempSync(join(tmpdir(), 'nccl-run-env-eval-'));
afterAll(() => rmSync(workdir, { recursive: true, force: true }));

/**
 * Evaluates the formatted text the way a user does, `eval "$(nccl-run env)"`,
 * then prints each variable NUL-terminated (no value can hold a NUL).
 */
async function evalInShell(shell: string, text: string, names: string[]): Promise<string[]> {
  const file = join(workdir, 'env.sh');
  writeFileSync(file, text);
  const printAll = names.map((name) => `"$${name}"`).join(' ');
  const { stdout } = await execa(
    shell,
    ['-c', `eval "$(cat -- "$1")"; printf '%s\\0' ${printAll}`, shell, file],
    {
      encoding: 'buffer',
      stripFinalNewline: false,
      env: { LC_ALL: 'C' },
      extendEnv: false,
      timeout: 20_000,
    },
  );
  const printed = Buffer.from(stdout).toString('utf8').split('\0');
  printed.pop();
  return printed;
}

describe.each(['bash', 'dash'])('eval in %s', (shell) => {
  it(`returns ${VALUES_PER_SHELL} arbitrary values byte for byte`, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(value, { minLength: VALUES_PER_SHELL, maxLength: VALUES_PER_SHELL }),
        async (values) => {
          const variables = Object.fromEntries(values.map((v, i) => [`NCCL_RUN_TEST_${i}`, v]));
          const names = Object.keys(variables);
          expect(await evalInShell(shell, formatEnv(variables, 'shell'), names)).toEqual(values);
        },
      ),
      { numRuns: 2 },
    );
  });

  it('exports the variables to child processes, not just to the shell', async () => {
    const text = formatEnv(
      { NCCL_SOCKET_IFNAME: '=ens3f0', GLOO_SOCKET_IFNAME: "it's $(id)" },
      'shell',
    );
    const file = join(workdir, 'export.sh');
    writeFileSync(file, text);
    const { stdout } = await execa(shell, ['-c', 'eval "$(cat -- "$1")"; env', shell, file], {
      env: { LC_ALL: 'C' },
      extendEnv: false,
      timeout: 20_000,
    });
    expect(stdout.split('\n')).toEqual(
      expect.arrayContaining(['NCCL_SOCKET_IFNAME==ens3f0', "GLOO_SOCKET_IFNAME=it's $(id)"]),
    );
  });
});
