/**
 * The man page the build writes (scripts/man-page.js → man/nccl-run.1), read
 * by the real groff and man-db as `man nccl-run` reads it: no warning (groff
 * -ww: every warning; man --warnings: man-db's default set, 'mac'), and
 * every option readable in what they render. Where npm and the wheel put
 * it, and `man nccl-run` after `pip install`, are in release.test.ts.
 */
import { existsSync, readFileSync } from 'node:fs';
import { execa } from 'execa';
import { beforeAll, describe, expect, it } from 'vitest';
import { MAN_PAGE_PATH } from '../../scripts/man-page.js';
import { manPage } from '../../src/cli/man-page.js';
import { COMMAND_FLAGS, OPTIONS, SUBCOMMANDS } from '../../src/options/option-table.js';

const { version } = JSON.parse(
  readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
) as { version: string };

beforeAll(() => {
  if (!existsSync(MAN_PAGE_PATH))
    throw new Error(`${MAN_PAGE_PATH} is missing: run npm run build first`);
});

describe('man/nccl-run.1', () => {
  it('is what the option table makes now: the build wrote it, nobody edited it', () => {
    expect(readFileSync(MAN_PAGE_PATH, 'utf8')).toBe(manPage(version));
  });

  it('groff reads it without a single warning', async () => {
    const { stderr, exitCode } = await execa('groff', ['-man', '-ww', '-z', MAN_PAGE_PATH]);
    expect(exitCode).toBe(0);
    expect(stderr).toBe('');
  });

  it('man -l renders it without a warning, every option and command readable', async () => {
    // MANROFFSEQ empty: no preprocessors from the page's first line; MANWIDTH: a fixed width.
    const { stdout, stderr } = await execa('man', ['--warnings', '-l', '-Tutf8', MAN_PAGE_PATH], {
      env: { MANROFFSEQ: '', MANWIDTH: '80', LANG: 'C.UTF-8' },
    });
    expect(stderr).toBe('');
    const { stdout: text } = await execa('col', ['-b', '-x'], { input: stdout });
    expect(text).toMatch(/^NCCL-RUN\(1\) +User Commands +NCCL-RUN\(1\)$/m);
    expect(text).toContain(`nccl-run ${version}`);
    for (const name of [...Object.keys(OPTIONS), ...Object.keys(COMMAND_FLAGS)])
      expect(text).toMatch(new RegExp(`^ +--${name}( |,|$)`, 'm'));
    for (const command of SUBCOMMANDS) expect(text).toContain(`nccl-run ${command}`);
    for (const heading of ['SYNOPSIS', 'OPTIONS', 'EXIT STATUS', 'EXAMPLES'])
      expect(text).toMatch(new RegExp(`^${heading}$`, 'm'));
  });

  it('the warnings it is held to are real: a page with an unknown macro fails them', async () => {
    const { stderr } = await execa('groff', ['-man', '-ww', '-z'], {
      input: `${manPage(version)}.doc-no-such-macro\n`,
    });
    expect(stderr).toContain("macro 'doc-no-such-macro' not defined");
  });
});
