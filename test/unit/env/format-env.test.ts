import { parse as parseDotenv } from 'dotenv';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatEnv } from '../../../src/env/format-env.js';
import { ConfigError } from '../../../src/errors.js';

/** Characters that break naive quoting in a shell or in dotenv, plus plain ones to join them. */
const nastyChar = fc.constantFrom(
  "'",
  '"',
  '`',
  '\\',
  '$',
  '#',
  '=',
  '^',
  ' ',
  '\t',
  '\n',
  '\r',
  'n',
  'r',
  'a',
  '0',
  'é',
  '😀',
  '(',
  ';',
);
const nastyValue = fc.array(nastyChar, { maxLength: 12 }).map((chars) => chars.join(''));
const anyValue = fc.oneof(
  nastyValue,
  fc.string({ unit: 'binary', maxLength: 24 }).filter((value) => !value.includes('\0')),
);

/** Several variables at once, so that a value that swallows the next line is caught. */
const variableSets = (value: fc.Arbitrary<string>) =>
  fc
    .array(value, { minLength: 1, maxLength: 6 })
    .map((values) => Object.fromEntries(values.map((v, i) => [`V${i}`, v])));

/**
 * The values dotenv-value.ts documents as unwritable, restated from the
 * readers' rules rather than from the implementation: docker's --env-file
 * literal value, compose's `$` and ` #`, systemd's backslashes, surrounding
 * blanks and leading quotes, dotenv's `#`, and line breaks for all of them.
 */
function documentedUnwritable(value: string): boolean {
  return /[\r\n#\\$]/.test(value) || /^[\s'"`]/.test(value) || /\s$/.test(value);
}

/** What `docker run --env-file` reads from a line: everything after the first `=`. */
function dockerEnvFile(text: string): Record<string, string> {
  const lines = text.split('\n').filter(Boolean);
  return Object.fromEntries(
    lines.map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
}

describe('formatEnv shell', () => {
  it.each([
    ['=ens3f0', "export NCCL_SOCKET_IFNAME='=ens3f0'\n"],
    ["it's", "export NCCL_SOCKET_IFNAME='it'\\''s'\n"],
    ['$HOME `id` \\n', "export NCCL_SOCKET_IFNAME='$HOME `id` \\n'\n"],
    ['a\nb', "export NCCL_SOCKET_IFNAME='a\nb'\n"],
    ['', "export NCCL_SOCKET_IFNAME=''\n"],
  ])('quotes %j', (value, expected) => {
    expect(formatEnv({ NCCL_SOCKET_IFNAME: value }, 'shell')).toBe(expected);
  });

  it('keeps the order it is given (SPEC table order), not sorted', () => {
    const text = formatEnv(
      { NCCL_SOCKET_IFNAME: '=eth0', GLOO_SOCKET_IFNAME: 'eth0', AAA: 'x' },
      'shell',
    );
    expect(text.split('\n').map((line) => line.split('=')[0])).toEqual([
      'export NCCL_SOCKET_IFNAME',
      'export GLOO_SOCKET_IFNAME',
      'export AAA',
      '',
    ]);
  });

  it('prints nothing for no variables', () => {
    expect(formatEnv({}, 'shell')).toBe('');
    expect(formatEnv({}, 'dotenv')).toBe('');
  });

  it.each([
    [{ 'BAD-NAME': 'x' }, "'BAD-NAME' is not a variable name"],
    [{ '1X': 'x' }, "'1X' is not a variable name"],
    [{ X: 'a\0b' }, 'X holds a NUL character'],
  ])('rejects what no environment can hold: %j', (variables, message) => {
    expect(() => formatEnv(variables, 'shell')).toThrow(ConfigError);
    expect(() => formatEnv(variables, 'shell')).toThrow(message);
  });
});

describe('formatEnv json', () => {
  it('prints one object that parses back, in the given order', () => {
    const variables = { NCCL_SOCKET_IFNAME: '=ens3f0', PET_NNODES: '2', X: 'quote " and \n' };
    const text = formatEnv(variables, 'json');
    expect(text.endsWith('}\n')).toBe(true);
    const parsed = JSON.parse(text);
    expect(parsed).toEqual(variables);
    expect(Object.keys(parsed)).toEqual(Object.keys(variables));
  });
});

describe('formatEnv dotenv', () => {
  it.each([
    ['ens3f0', 'K=ens3f0\n'],
    ['198.18.0.1', 'K=198.18.0.1\n'],
    ['=ens3f0', 'K==ens3f0\n'],
    ['^docker,lo', 'K=^docker,lo\n'],
    ["it's a b", "K=it's a b\n"],
    ['', 'K=\n'],
  ])('writes %j unquoted, as docker, compose, systemd and dotenv read it', (value, expected) => {
    const text = formatEnv({ K: value }, 'dotenv');
    expect(text).toBe(expected);
    expect(dockerEnvFile(text)).toEqual({ K: value });
    expect(parseDotenv(text)).toEqual({ K: value });
  });

  it.each([
    ['a\nb', 'a line break'],
    [' lead', 'blanks at its start or end'],
    ["'quoted'", 'a leading quote'],
    ['a #b', 'a #'],
    ['C:\\dir', 'a backslash'],
    ['$HOME', 'a $'],
  ])('refuses %j with a ConfigError naming the variable, the value and why', (value, reason) => {
    const attempt = () => formatEnv({ NCCL_DEBUG_SUBSYS: value }, 'dotenv');
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(
      `NCCL_DEBUG_SUBSYS cannot be written as dotenv: ${JSON.stringify(value)} holds ${reason}`,
    );
    expect(attempt).toThrow('use --format shell or --format json');
  });

  it('docker and dotenv read back every value it writes, and it refuses exactly the documented ones', () => {
    fc.assert(
      fc.property(variableSets(anyValue), (variables) => {
        const unwritable = Object.values(variables).some(documentedUnwritable);
        let text: string;
        try {
          text = formatEnv(variables, 'dotenv');
        } catch (error) {
          expect(error).toBeInstanceOf(ConfigError);
          expect(unwritable).toBe(true);
          return;
        }
        expect(unwritable).toBe(false);
        expect(dockerEnvFile(text)).toEqual(variables);
        expect(parseDotenv(text)).toEqual(variables);
      }),
      { numRuns: 2000 },
    );
  });
});
