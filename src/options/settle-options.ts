/**
 * Settles nccl-run's options from four sources, SPEC "Options":
 * flag > process environment (NCCL_RUN_*) > env file > default.
 * Every value from outside passes its schema (option-table.ts); a bad one is
 * one line naming where it came from, the value and what is valid, 64 or 78
 * by its origin (errors.ts).
 */

import { existsSync, readFileSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import { parse as parseDotenv } from 'dotenv';
import { decodeBytes, encodeBytes } from '../byte-string.js';
import { badValue, ConfigError, settingError } from '../errors.js';
import { isShellName } from '../launch/hand-over.js';
import { type Origin, originText } from '../origin.js';
import { camelCase, envNameOf, OPTIONS, type OptionName, type Options } from './option-table.js';
import { reaches } from './verify-level.js';

/** Where an option's value came from: where it was given, else its flag, holding its default. */
export function optionOrigin(sources: Settled['sources'], name: OptionName): Origin {
  return sources[name] ?? { name: `--${name}`, from: 'default' };
}

export interface Settled {
  options: Options;
  /** Env-file keys that are not NCCL_RUN_*: they go to torchrun's environment. */
  envFileExtras: Record<string, string>;
  /** Where each option that was given came from, for the messages that name it. */
  sources: Partial<Record<OptionName, Origin>>;
}

const OPTION_NAMES = Object.keys(OPTIONS) as OptionName[];
const ENV_NAMES = new Set(OPTION_NAMES.map(envNameOf));

/**
 * flags: nccl-run's own tokens by option name (cli/split-argv.ts).
 * env: the process environment. cwd: where ./nccl-run.env is looked for.
 */
export function settleOptions(
  flags: Readonly<Record<string, string | boolean>>,
  env: NodeJS.ProcessEnv,
  cwd: string,
): Settled {
  // Unknown NCCL_RUN_* variables are typos that would silently do nothing.
  rejectUnknownKeys(Object.keys(env), 'the environment');
  const envFile = findEnvFile(flags, env, cwd);
  const fileValues = envFile === null ? {} : readEnvFile(envFile);
  rejectUnknownKeys(Object.keys(fileValues), envFile?.path ?? '');

  const options: Record<string, unknown> = {};
  const sources: Settled['sources'] = {};
  for (const name of OPTION_NAMES) {
    const spec = OPTIONS[name];
    const given = givenValue(name, flags, env, fileValues, envFile?.path);
    if (given === null) {
      options[camelCase(name)] = spec.default ?? null;
      continue;
    }
    const parsed = spec.schema.safeParse(given.raw);
    if (!parsed.success) {
      const expected = parsed.error.issues[0]?.message ?? 'invalid value';
      throw badValue(given.origin, String(given.raw), expected);
    }
    options[camelCase(name)] = parsed.data;
    sources[name] = given.origin;
  }
  // The path as read, not as written: relative to where nccl-run was started.
  options.envFile = envFile?.path ?? null;
  const settled = {
    options: options as Options,
    envFileExtras: Object.fromEntries(
      Object.entries(fileValues).filter(([key]) => !key.startsWith('NCCL_RUN_')),
    ),
    sources,
  };
  checkCombination(settled);
  return settled;
}

function givenValue(
  name: OptionName,
  flags: Readonly<Record<string, string | boolean>>,
  env: NodeJS.ProcessEnv,
  fileValues: Record<string, string>,
  envFilePath: string | undefined,
): { raw: string | boolean; origin: Origin } | null {
  const flag = flags[name];
  if (flag !== undefined) return { raw: flag, origin: { name: `--${name}`, from: 'flag' } };
  const envName = envNameOf(name);
  const fromEnv = env[envName];
  if (fromEnv !== undefined) return { raw: fromEnv, origin: { name: envName, from: 'env' } };
  const fromFile = fileValues[envName];
  if (fromFile === undefined) return null;
  return { raw: fromFile, origin: { name: `${envName} in ${envFilePath}`, from: 'env-file' } };
}

/** Settings that are each valid but cannot work together: the configuration is wrong (78). */
function checkCombination({ options, sources }: Settled): void {
  const from = (name: OptionName) => {
    const origin = optionOrigin(sources, name);
    return origin.from === 'default' ? 'the default' : originText(origin);
  };
  if (options.iface.length > 0 && !options.strategy.includes('explicit')) {
    throw new ConfigError(
      `${originText(optionOrigin(sources, 'strategy'))}: --iface ${options.iface.join(',')} is given but the strategy list '${options.strategy.join(',')}' has no 'explicit'; add it or drop --iface`,
    );
  }
  if (options.minBandwidth !== null && !reaches(options.verify, 'peers')) {
    // SPEC --min-bandwidth: only the peers level measures; accepted elsewhere it would check nothing.
    throw new ConfigError(
      `${from('min-bandwidth')}: --min-bandwidth needs --verify peers (the level is ${options.verify}, from ${from('verify')})`,
    );
  }
  if (options.minBusBandwidth !== null && !reaches(options.verify, 'collective')) {
    // SPEC --min-bus-bandwidth: only the collective level moves data through NCCL or Gloo.
    throw new ConfigError(
      `${from('min-bus-bandwidth')}: --min-bus-bandwidth needs --verify collective (the level is ${options.verify}, from ${from('verify')})`,
    );
  }
}

interface EnvFile {
  path: string;
  origin: Origin;
}

/** --env-file, else NCCL_RUN_ENV_FILE, else ./nccl-run.env when it exists. */
function findEnvFile(
  flags: Readonly<Record<string, string | boolean>>,
  env: NodeJS.ProcessEnv,
  cwd: string,
): EnvFile | null {
  const given = givenValue('env-file', flags, env, {}, undefined);
  if (given !== null) {
    const parsed = OPTIONS['env-file'].schema.safeParse(given.raw);
    if (!parsed.success) {
      throw badValue(given.origin, String(given.raw), parsed.error.issues[0]?.message ?? '');
    }
    return { path: resolvePath(cwd, parsed.data), origin: given.origin };
  }
  const path = resolvePath(cwd, 'nccl-run.env');
  return existsSync(path) ? { path, origin: { name: './nccl-run.env', from: 'default' } } : null;
}

function readEnvFile({ path, origin }: EnvFile): Record<string, string> {
  let values: Record<string, string>;
  try {
    // Bytes that are not UTF-8 reach torchrun as they are (byte-string.ts).
    values = parseDotenv(decodeBytes(readFileSync(path)));
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? String(error);
    throw settingError(origin, `cannot read '${path}' (${reason}); give a readable dotenv file`);
  }
  for (const [key, value] of Object.entries(values)) checkEnvFileEntry(path, key, value);
  return values;
}

/**
 * Linux's execve(2) takes at most MAX_ARG_STRLEN (32 pages: 131,072 bytes)
 * for one NAME=VALUE string, its NUL included; a longer one fails every exec.
 */
const MAX_ENTRY_BYTES = 131_072 - 1;

/**
 * An entry the launch cannot pass fails here, before anything runs, not at
 * the exec after a minute of verification: the shell exports only names that
 * are identifiers (dotenv also reads `a.b` and `a-b`), and the kernel limits
 * each entry's size.
 */
function checkEnvFileEntry(path: string, key: string, value: string): void {
  if (!isShellName(key)) {
    throw new ConfigError(
      `${path}: key '${key}' is not a variable name a shell can export; use letters, digits and _, not starting with a digit`,
    );
  }
  const bytes = encodeBytes(`${key}=${value}`).length;
  if (bytes > MAX_ENTRY_BYTES) {
    throw new ConfigError(
      `${path}: ${key} is ${bytes.toLocaleString('en-US')} bytes with its name; Linux passes at most ${MAX_ENTRY_BYTES.toLocaleString('en-US')} bytes per variable to a program (MAX_ARG_STRLEN), so no launcher could start with it`,
    );
  }
}

function rejectUnknownKeys(keys: string[], where: string): void {
  for (const key of keys) {
    if (key.startsWith('NCCL_RUN_') && !ENV_NAMES.has(key)) {
      throw new ConfigError(
        `${key} in ${where} is not a nccl-run setting; valid: ${[...ENV_NAMES].join(', ')}`,
      );
    }
  }
}
