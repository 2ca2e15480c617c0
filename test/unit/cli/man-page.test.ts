/**
 * nccl-run(1) is written from the tables --help is written from
 * (src/cli/man-page.ts): every option, command flag, command line, exit
 * status and example is in it, each once, as roff that groff reads as text.
 */
import { describe, expect, it } from 'vitest';
import { manPage, roffText } from '../../../src/cli/man-page.js';
import { ARGUMENT_RULES, COMMAND_LINES, EXAMPLES } from '../../../src/cli/parser.js';
import { EXIT_STATUS } from '../../../src/exit-status.js';
import {
  COMMAND_FLAGS,
  envNameOf,
  OPTIONS,
  SUBCOMMANDS,
} from '../../../src/options/option-table.js';

const page = manPage('0.1.0');
/** The section from its .SH line to the next. */
const section = (name: string) => {
  const start = page.indexOf(`.SH ${name}\n`);
  expect(start, `section ${name}`).toBeGreaterThanOrEqual(0);
  const end = page.indexOf('\n.SH ', start + 1);
  return page.slice(start, end === -1 ? undefined : end);
};

describe('manPage', () => {
  it('has one entry per option, with its description and its NCCL_RUN_ name', () => {
    const options = section('OPTIONS');
    for (const [name, spec] of Object.entries(OPTIONS)) {
      const entries = options.match(
        new RegExp(`^\\\\-\\\\-${roffText(name).replaceAll('\\', '\\\\')}( |$)`, 'gm'),
      );
      expect(entries, name).toHaveLength(1);
      expect(options).toContain(roffText(spec.describe));
      expect(options).toContain(roffText(envNameOf(name)));
    }
  });

  it('has the command flags, which have no NCCL_RUN_ name', () => {
    const options = section('OPTIONS');
    for (const [name, spec] of Object.entries(COMMAND_FLAGS)) {
      expect(options).toMatch(
        new RegExp(`^\\\\-\\\\-${roffText(name).replaceAll('\\', '\\\\')}([ ,]|$)`, 'm'),
      );
      expect(options).toContain(roffText(spec.describe));
      expect(options).not.toContain(roffText(envNameOf(name)));
    }
  });

  it('names every subcommand in the synopsis and under COMMANDS', () => {
    for (const command of SUBCOMMANDS) {
      expect(section('SYNOPSIS')).toContain(`nccl\\-run ${command}`);
      expect(section('COMMANDS')).toContain(`nccl\\-run ${command}`);
    }
    for (const { what } of COMMAND_LINES) expect(section('COMMANDS')).toContain(roffText(what));
  });

  it('lists every exit status of the table', () => {
    const exits = section('EXIT STATUS');
    for (const { code } of Object.values(EXIT_STATUS))
      expect(exits).toMatch(new RegExp(`^${code}$`, 'm'));
    expect(exits).toContain('128 + N');
  });

  it("has --help's examples and its rule for nccl-run's words and torchrun's", () => {
    for (const { command } of EXAMPLES) expect(section('EXAMPLES')).toContain(roffText(command));
    expect(section('DESCRIPTION')).toContain(roffText(ARGUMENT_RULES.join(' ')));
  });

  it('names its version in the title line', () => {
    expect(page).toMatch(/^\.TH NCCL\\-RUN 1 "" "nccl\\-run 0\.1\.0" "User Commands"$/m);
  });
});

describe('roffText', () => {
  it.each([
    ['--iface', '\\-\\-iface'],
    ['a\\b', 'a\\eb'],
    ['.starts like a request', '\\&.starts like a request'],
    ["'so does this", "\\&'so does this"],
    ['plain', 'plain'],
  ])('%s', (text, roff) => {
    expect(roffText(text)).toBe(roff);
  });
});
