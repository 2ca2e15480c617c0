/**
 * Settles nccl-run's options from four sources, SPEC "Options":
 * flag > process environment (NCCL_RUN_*) > env file > default.
 * Every value from outside passes a zod schema; a bad one is one line naming
 * where it came from, the value and what is valid. A bad flag is a usage
 * error (64); a bad variable or env-file entry a configuration error (78).
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import { parse as parseDotenv } from 'dotenv';
import * as z from 'zod/mini';
import '../zod-english.js';
import { ConfigError, UsageError } from '../errors.js';
import { STRATEGY_NAMES, type StrategyName } from '../resolve/decision.js';
import { parseExcludeRule } from '../resolve/excludes.js';
import { DEFAULT_CHAIN } from '../resolve/strategies/index.js';
import type { RequiredTransport } from '../transport/transport-requirement.js';
import { parseDuration } from './duration.js';
import { envNameOf, OPTION_SPECS } from './options.js';
import { parseRate } from './rate.js';

export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'silent';

export interface Options {
  iface: string[];
  strategy: StrategyName[];
  /** Raw exclude entries as given (parsed and checked by resolve/excludes.ts). */
  exclude: string[];
  noDefaultExcludes: boolean;
  family: 'auto' | 'ipv4' | 'ipv6';
  facts: string | null;
  verify: 'none' | 'local' | 'master' | 'peers';
  verifyTimeoutMs: number;
  /** --require-transport: the data plane run and check insist on; null when not asked. */
  requireTransport: RequiredTransport | null;
  /** Raw --peers (comma list or Slurm hostlist), null when not given. */
  peers: string | null;
  probePort: number | null;
  /** --min-bandwidth in megabits per second; null when not given. */
  minBandwidthMbps: number | null;
  cluster: 'auto' | 'slurm' | 'k8s' | 'none';
  ncclDebug: string | null;
  ncclDebugSubsys: string | null;
  force: boolean;
  torchrun: string[];
  envFile: string | null;
  dryRun: boolean;
  json: boolean;
  format: 'shell' | 'dotenv' | 'json';
  logLevel: LogLevel;
  logFormat: 'pretty' | 'json';
}

export interface Settled {
  options: Options;
  /** Env-file keys that are not NCCL_RUN_*: they go to torchrun's environment. */
  envFileExtras: Record<string, string>;
  /** Where each option's value came from, for `explain`. */
  sources: Record<string, string>;
}

type Raw = string | boolean;

const list = (value: string) =>
  value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');

const TRUE_WORDS = ['1', 'true', 'yes', 'on'] as const;
const FALSE_WORDS = ['0', 'false', 'no', 'off', ''] as const;
const bool = z.union(
  [
    z.boolean(),
    z.pipe(
      z.enum([...TRUE_WORDS, ...FALSE_WORDS]),
      z.transform((v) => (TRUE_WORDS as readonly string[]).includes(v)),
    ),
  ],
  {
    error: `expected a boolean: ${TRUE_WORDS.join(', ')} or ${FALSE_WORDS.filter(Boolean).join(', ')} (or empty)`,
  },
);

const port = z
  .pipe(z.string().check(z.regex(/^\d+$/, 'expected a port number 1-65535')), z.transform(Number))
  .check(z.refine((n) => n >= 1 && n <= 65535, 'expected a port number 1-65535'));

const choice = <T extends string>(values: readonly [T, ...T[]]) =>
  z.enum(values, { error: `expected one of ${values.join(', ')}` });

/** A comma list, trimmed, empty items dropped. */
const commaList = () => z.pipe(z.string(), z.transform(list));

/** One schema per option; each turns the raw string (or boolean) into the typed value. */
const schemas = {
  iface: commaList(),
  strategy: commaList().check(
    z.superRefine((names, ctx) => {
      if (names.length === 0)
        ctx.addIssue({
          code: 'custom',
          message: `expected a comma list of ${STRATEGY_NAMES.join(', ')}`,
        });
      for (const name of names) {
        if (!(STRATEGY_NAMES as readonly string[]).includes(name)) {
          ctx.addIssue({
            code: 'custom',
            message: `unknown strategy '${name}'; valid: ${STRATEGY_NAMES.join(', ')}`,
          });
        }
      }
      const repeated = names.find((name, i) => names.indexOf(name) !== i);
      if (repeated)
        ctx.addIssue({ code: 'custom', message: `strategy '${repeated}' is listed twice` });
    }),
  ),
  exclude: commaList().check(
    z.superRefine((entries, ctx) => {
      for (const entry of entries) {
        try {
          parseExcludeRule(entry);
        } catch (error) {
          ctx.addIssue({ code: 'custom', message: (error as Error).message });
        }
      }
    }),
  ),
  'no-default-excludes': bool,
  family: choice(['auto', 'ipv4', 'ipv6']),
  facts: z.string().check(z.minLength(1, 'expected a file path')),
  verify: choice(['none', 'local', 'master', 'peers']),
  'verify-timeout': z.pipe(
    z.string(),
    // zod/mini's transform context has no addIssue: the issue goes on the payload itself.
    z.transform((value: string, payload) => {
      const ms = parseDuration(value);
      if (ms === null) {
        payload.issues.push({
          code: 'custom',
          message: 'expected a duration such as 500ms, 30s, 2m',
          input: value,
        });
        return z.NEVER;
      }
      return ms;
    }),
  ),
  'require-transport': choice(['ib']),
  peers: z.string(),
  'probe-port': port,
  'min-bandwidth': z.pipe(
    z.string(),
    z.transform((value: string, payload) => {
      const mbps = parseRate(value);
      if (mbps === null) {
        payload.issues.push({
          code: 'custom',
          message: 'expected a rate with its unit, such as 500mbit, 10gbit, 2GB/s',
          input: value,
        });
        return z.NEVER;
      }
      return mbps;
    }),
  ),
  cluster: choice(['auto', 'slurm', 'k8s', 'none']),
  'nccl-debug': z.pipe(
    z.pipe(
      z.string(),
      z.transform((v: string) => v.toUpperCase()),
    ),
    choice(['VERSION', 'WARN', 'INFO', 'TRACE']),
  ),
  'nccl-debug-subsys': z.string().check(z.minLength(1, 'expected a comma list such as INIT,NET')),
  force: bool,
  torchrun: z
    .pipe(
      z.string(),
      z.transform((v: string) => v.trim().split(/\s+/).filter(Boolean)),
    )
    .check(
      z.refine(
        (words) => words.length > 0,
        'expected a command such as torchrun or "python3 -m torch.distributed.run"',
      ),
    ),
  'env-file': z.string().check(z.minLength(1, 'expected a file path')),
  'dry-run': bool,
  json: bool,
  format: choice(['shell', 'dotenv', 'json']),
  'log-level': choice(['trace', 'debug', 'info', 'warn', 'error', 'silent']),
  'log-format': choice(['pretty', 'json']),
} satisfies Record<string, z.ZodMiniType>;

type SchemaName = keyof typeof schemas;

const CONFIGURABLE = OPTION_SPECS.filter((spec) => !spec.flagOnly).map(
  (spec) => spec.name as SchemaName,
);
const ENV_NAMES = new Map(CONFIGURABLE.map((name) => [envNameOf(name), name]));

/**
 * flags: yargs' parse of nccl-run's own tokens, kebab-case keys.
 * env: the process environment. cwd: where ./nccl-run.env is looked for.
 * isTty: whether stderr is a terminal (pretty logs by default).
 */
export function settleOptions(
  flags: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
  cwd: string,
  isTty: boolean,
): Settled {
  // Unknown NCCL_RUN_* variables are typos that would silently do nothing.
  rejectUnknownKeys(Object.keys(env), 'the environment');

  const envFileFlag = flags['env-file'] as string | undefined;
  const envFileVar = env.NCCL_RUN_ENV_FILE;
  const explicitEnvFile = envFileFlag ?? envFileVar;
  const envFilePath =
    explicitEnvFile !== undefined ? resolvePath(cwd, explicitEnvFile) : defaultEnvFile(cwd);
  const fileValues =
    envFilePath === null ? {} : readEnvFile(envFilePath, envFileFlag !== undefined);
  rejectUnknownKeys(Object.keys(fileValues), envFilePath ?? '');

  const values: Record<string, unknown> = {};
  const sources: Record<string, string> = {};
  for (const name of CONFIGURABLE) {
    const envName = envNameOf(name);
    let raw: Raw | undefined;
    let origin: string;
    if (flags[name] !== undefined) {
      raw = flags[name] as Raw;
      origin = `--${name}`;
    } else if (env[envName] !== undefined) {
      raw = env[envName];
      origin = envName;
    } else if (fileValues[envName] !== undefined) {
      raw = fileValues[envName];
      origin = `${envName} in ${envFilePath}`;
    } else {
      continue;
    }
    const parsed = schemas[name].safeParse(raw);
    if (!parsed.success) {
      const message = parsed.error.issues[0]?.message ?? 'invalid value';
      throw optionError(origin, `bad value '${String(raw)}': ${message}`);
    }
    values[name] = parsed.data;
    sources[name] = origin;
  }

  const envFileExtras = Object.fromEntries(
    Object.entries(fileValues).filter(([key]) => !key.startsWith('NCCL_RUN_')),
  );

  const options: Options = {
    iface: (values.iface as string[] | undefined) ?? [],
    strategy: (values.strategy as StrategyName[] | undefined) ?? [...DEFAULT_CHAIN],
    exclude: (values.exclude as string[] | undefined) ?? [],
    noDefaultExcludes: (values['no-default-excludes'] as boolean | undefined) ?? false,
    family: (values.family as Options['family'] | undefined) ?? 'auto',
    facts: (values.facts as string | undefined) ?? null,
    verify: (values.verify as Options['verify'] | undefined) ?? 'master',
    verifyTimeoutMs: (values['verify-timeout'] as number | undefined) ?? 60_000,
    requireTransport: (values['require-transport'] as RequiredTransport | undefined) ?? null,
    peers: (values.peers as string | undefined) ?? null,
    probePort: (values['probe-port'] as number | undefined) ?? null,
    minBandwidthMbps: (values['min-bandwidth'] as number | undefined) ?? null,
    cluster: (values.cluster as Options['cluster'] | undefined) ?? 'auto',
    ncclDebug: (values['nccl-debug'] as string | undefined) ?? null,
    ncclDebugSubsys: (values['nccl-debug-subsys'] as string | undefined) ?? null,
    force: (values.force as boolean | undefined) ?? false,
    torchrun: (values.torchrun as string[] | undefined) ?? ['torchrun'],
    envFile: envFilePath,
    dryRun: (values['dry-run'] as boolean | undefined) ?? false,
    json: (values.json as boolean | undefined) ?? false,
    format: (values.format as Options['format'] | undefined) ?? 'shell',
    logLevel: (values['log-level'] as LogLevel | undefined) ?? 'info',
    logFormat:
      (values['log-format'] as Options['logFormat'] | undefined) ?? (isTty ? 'pretty' : 'json'),
  };
  if (options.iface.length > 0 && !options.strategy.includes('explicit')) {
    const origin = sources.strategy ?? '--strategy';
    throw new ConfigError(
      `${origin}: --iface ${options.iface.join(',')} is given but the strategy list '${options.strategy.join(',')}' has no 'explicit'; add it or drop --iface`,
    );
  }
  if (options.minBandwidthMbps !== null && options.verify !== 'peers') {
    // SPEC --min-bandwidth: only the peers level measures; accepted elsewhere it would check nothing.
    throw new ConfigError(
      `${sources['min-bandwidth']}: --min-bandwidth needs --verify peers (the level is ${options.verify}, from ${sources.verify ?? 'the default'})`,
    );
  }
  return { options, envFileExtras, sources };
}

/** A bad value is a usage error (64) when it came from a flag, a configuration error (78) otherwise. */
export function optionError(origin: string, problem: string): UsageError | ConfigError {
  const line = `${origin}: ${problem}`;
  return origin.startsWith('--') ? new UsageError(line) : new ConfigError(line);
}

function defaultEnvFile(cwd: string): string | null {
  const path = resolvePath(cwd, 'nccl-run.env');
  return existsSync(path) ? path : null;
}

function readEnvFile(path: string, fromFlag: boolean): Record<string, string> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? String(error);
    const line = `${fromFlag ? '--env-file' : 'NCCL_RUN_ENV_FILE'}: cannot read '${path}' (${reason}); give a readable dotenv file`;
    throw fromFlag ? new UsageError(line) : new ConfigError(line);
  }
  return parseDotenv(text);
}

function rejectUnknownKeys(keys: string[], where: string): void {
  for (const key of keys) {
    if (key.startsWith('NCCL_RUN_') && !ENV_NAMES.has(key)) {
      throw new ConfigError(
        `${key} in ${where} is not a nccl-run setting; valid: ${[...ENV_NAMES.keys()].join(', ')}`,
      );
    }
  }
}
