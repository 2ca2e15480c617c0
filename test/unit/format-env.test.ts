import { parse as parseDotenv } from 'dotenv';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatEnv } from '../../src/env/format-env.js';
import { ConfigError } from '../../src/errors.js';

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
 * The values dotenv-value.ts documents as unwritable, restated from dotenv's
 * grammar rather than from the implementation: a trailing backslash that
 * cannot stay unquoted, or a value that needs double quotes (a carriage
 * return, or both ' and `) and holds what double quotes cannot.
 */
function documentedUnwritable(value: string): boolean {
  if (/^[\w.,:/@%+-]+$/.test(value)) return false;
  if (value.endsWith('\\')) {
    const bareSafe = !/[#\r\n]/.test(value) && !/^[\s'"`]/.test(value) && !/\s$/.test(value);
    return !bareSafe;
  }
  const needsDouble = value.includes('\r') || (value.includes("'") && value.includes('`'));
  return needsDouble && (value.includes('"') || /\\[nr]/.test(value));
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
    ['=ens3f0', "K='=ens3f0'\n"],
    ['^docker,lo', "K='^docker,lo'\n"],
    ['a b # c', "K='a b # c'\n"],
    ["it's", "K=`it's`\n"],
    ["it's `x`", `K="it's \`x\`"\n`],
    ['line1\r\nline2', 'K="line1\\r\\nline2"\n'],
    ['C:\\dir\\', 'K=C:\\dir\\\n'],
  ])('writes %j as dotenv reads it', (value, expected) => {
    const text = formatEnv({ K: value }, 'dotenv');
    expect(text).toBe(expected);
    expect(parseDotenv(text)).toEqual({ K: value });
  });

  it.each([
    ['a\r"b', 'it needs double quotes (it holds a carriage return)'],
    ['\'`"', "it needs double quotes (it holds both ' and `)"],
    ['x\ny\\', 'it ends in a backslash'],
  ])('refuses %j with a ConfigError naming the variable', (value, reason) => {
    const attempt = () => formatEnv({ NCCL_DEBUG_SUBSYS: value }, 'dotenv');
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(`NCCL_DEBUG_SUBSYS cannot be written as dotenv: ${reason}`);
    expect(attempt).toThrow('use --format shell or --format json');
  });

  it('dotenv.parse reads back every value it writes, and refuses exactly the documented ones', () => {
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
        expect(parseDotenv(text)).toEqual(variables);
      }),
      { numRuns: 2000 },
    );
  });

  it('writes every value free of carriage returns and backslashes, whatever its quotes', () => {
    const value = fc
      .string({ unit: 'binary', maxLength: 40 })
      .filter(
        (v) => !/[\0\r\\]/.test(v) && !(v.includes("'") && v.includes('`') && v.includes('"')),
      );
    fc.assert(
      fc.property(variableSets(value), (variables) => {
        expect(parseDotenv(formatEnv(variables, 'dotenv'))).toEqual(variables);
      }),
      { numRuns: 500 },
    );
  });
});
