/**
 * The wrappers users put around torchrun to reach the torch of an
 * environment or a container (`--torchrun 'conda run -n train torchrun'`),
 * read from files as the wrapper would enter them, so that the torch and the
 * NCCL inside can be read (SPEC "The stack"). Each wrapper is unwrapped to
 * the command it runs, the file system it runs it in and its environment:
 *
 * - `env [-i] [-u NAME] [NAME=VALUE]... CMD` (coreutils env);
 * - `conda|mamba|micromamba run -n NAME | -p PREFIX CMD`: the environment's
 *   own bin/ first on PATH, as `conda run` activates it;
 * - `uv run CMD`: the project's .venv (the nearest pyproject.toml up from
 *   --project, --directory or the working folder; UV_PROJECT_ENVIRONMENT);
 * - `pixi run CMD`: the project's .pixi/envs/default (or -e NAME), the
 *   project the nearest pixi.toml (or pyproject.toml with [tool.pixi]);
 * - `apptainer|singularity exec [options] IMAGE CMD` where IMAGE is a
 *   sandbox folder: CMD read inside it (its options from apptainer's own
 *   table, cmd/internal/cli/action_flags.go);
 * - `chroot [options] ROOT CMD`.
 *
 * What cannot be read cheaply (a SIF file, a docker:// or library:// image,
 * an instance, an option nccl-run cannot place) is `unreadable`, with the
 * reason: there the torch is declared (--torch-version).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { attempt } from '../host/attempt.js';

type Env = Readonly<Record<string, string | undefined>>;

export interface Unwrapped {
  /** The command the innermost wrapper runs: torchrun, or a Python with -m. */
  words: string[];
  /** The file system it runs in: '' for this host's, else a folder of this host. */
  root: string;
  env: Env;
  /** The wrappers passed, outermost first, as explain names them: "conda run -n train". */
  via: string[];
  /**
   * The wrapper that starts its command with a clean environment (`env -i`,
   * `apptainer exec --cleanenv`, `pixi run --clean-env`), so that none of the
   * variables nccl-run exports reach torchrun; null when none does.
   */
  clears: string | null;
}

export type Unwrapping = Unwrapped | { unreadable: string; via: string[]; clears: string | null };

/** A folder on this host, seen through `root` ('' for the host itself). */
const inRoot = (root: string, path: string) => (root === '' ? path : join(root, path));
const isDir = (path: string) =>
  attempt(() => statSync(path, { throwIfNoEntry: false })?.isDirectory()) === true;

/** Unwraps every wrapper it knows around the launcher's words, outermost first; root: '' for this host. */
export function unwrapLauncher(
  words: readonly string[],
  env: Env,
  cwd: string,
  root = '',
): Unwrapping {
  let current: Unwrapped = { words: [...words], root, env, via: [], clears: null };
  for (let depth = 0; depth < 8; depth += 1) {
    const step = unwrapOnce(current, cwd);
    if (step === null) return current;
    if ('unreadable' in step) return step;
    current = step;
  }
  return { unreadable: 'more than 8 wrappers deep', via: current.via, clears: current.clears };
}

function unwrapOnce(outer: Unwrapped, cwd: string): Unwrapping | null {
  const [command = '', ...rest] = outer.words;
  const name = basename(command);
  const sub = rest[0];
  if (name === 'env') return viaEnv(outer, rest);
  if (['conda', 'mamba', 'micromamba'].includes(name) && sub === 'run') {
    return viaConda(outer, name, rest.slice(1));
  }
  if (name === 'uv' && sub === 'run') return viaUv(outer, rest.slice(1), cwd);
  if (name === 'pixi' && sub === 'run') return viaPixi(outer, rest.slice(1), cwd);
  if (name === 'apptainer' || name === 'singularity') return viaApptainer(outer, name, rest);
  if (name === 'chroot') return viaChroot(outer, rest, cwd);
  return null;
}

/** What a wrapper gives on: the rest of the words, with its root, env and name. */
function inner(
  outer: Unwrapped,
  words: readonly string[],
  shown: string,
  /** clears: the wrapper as named where it starts its command with a clean environment. */
  change: { root?: string; env?: Env; clears?: string | null } = {},
): Unwrapping {
  const via = [...outer.via, shown];
  const clears = change.clears ?? outer.clears;
  if (words.length === 0) return { unreadable: `${shown} runs no command`, via, clears };
  return {
    words: [...words],
    root: change.root ?? outer.root,
    env: change.env ?? outer.env,
    via,
    clears,
  };
}

/** coreutils env: -i, -u NAME, -C DIR, --, NAME=VALUE..., then the command. */
function viaEnv(outer: Unwrapped, args: readonly string[]): Unwrapping {
  let env: Record<string, string | undefined> = { ...outer.env };
  let clears = false;
  let index = 0;
  for (; index < args.length; index += 1) {
    const arg = args[index] as string;
    if (arg === '-i' || arg === '--ignore-environment' || arg === '-') {
      env = {};
      clears = true;
    } else if (arg === '-u' || arg === '--unset') delete env[args[++index] ?? ''];
    else if (arg.startsWith('--unset=')) delete env[arg.slice('--unset='.length)];
    else if (arg === '-C' || arg === '--chdir') index += 1;
    else if (arg.startsWith('--chdir=')) continue;
    else if (arg === '-0' || arg === '--null' || arg === '-v' || arg === '--debug') continue;
    else if (arg === '--') {
      index += 1;
      break;
    } else if (arg.startsWith('-')) {
      return {
        unreadable: `env ${arg} (an option nccl-run does not read)`,
        via: outer.via,
        clears: outer.clears,
      };
    } else break;
  }
  for (; index < args.length && /^[^=]+=/.test(args[index] as string); index += 1) {
    const arg = args[index] as string;
    const equals = arg.indexOf('=');
    env[arg.slice(0, equals)] = arg.slice(equals + 1);
  }
  return inner(outer, args.slice(index), clears ? 'env -i' : 'env', {
    env,
    clears: clears ? 'env -i' : null,
  });
}

/** The options of `conda run` that take a value; the rest are flags. */
const CONDA_RUN_VALUES = new Set(['-n', '--name', '-p', '--prefix', '--cwd']);

function viaConda(outer: Unwrapped, tool: string, args: readonly string[]): Unwrapping {
  let name: string | null = null;
  let prefix: string | null = null;
  let index = 0;
  for (; index < args.length; index += 1) {
    const arg = args[index] as string;
    if (!arg.startsWith('-')) break;
    const [flag, attached] = arg.includes('=') ? arg.split(/=(.*)/s) : [arg, undefined];
    if (!CONDA_RUN_VALUES.has(flag as string)) continue;
    const value = attached ?? args[++index] ?? '';
    if (flag === '-n' || flag === '--name') name = value;
    if (flag === '-p' || flag === '--prefix') prefix = value;
  }
  const shown =
    `${tool} run ${prefix !== null ? `-p ${prefix}` : name !== null ? `-n ${name}` : ''}`.trim();
  const environment =
    prefix ?? (name === null ? (outer.env.CONDA_PREFIX ?? null) : condaEnvNamed(name, outer));
  if (environment === null) {
    return {
      unreadable: `${shown}: no conda environment named ${name} found`,
      via: outer.via,
      clears: outer.clears,
    };
  }
  return inner(outer, args.slice(index), shown, { env: activated(outer.env, environment) });
}

/** Where conda keeps environment `name`: envs_dirs as conda searches them (CONDA_ENVS_PATH, the base's envs/, ~/.conda/envs). */
function condaEnvNamed(name: string, outer: Unwrapped): string | null {
  const { env, root } = outer;
  const base =
    env.CONDA_ROOT ??
    (env.CONDA_EXE ? dirname(dirname(env.CONDA_EXE)) : null) ??
    env.MAMBA_ROOT_PREFIX ??
    null;
  if (name === 'base') return base;
  const dirs = [
    ...(env.CONDA_ENVS_PATH ?? env.CONDA_ENVS_DIRS ?? '').split(':').filter(Boolean),
    ...(base === null ? [] : [join(base, 'envs')]),
    join(env.HOME ?? homedir(), '.conda', 'envs'),
  ];
  const found = dirs.map((dir) => join(dir, name)).find((dir) => isDir(inRoot(root, dir)));
  return found ?? null;
}

/** An environment activated: its bin/ first on PATH, as conda run, uv run and pixi run do. */
function activated(env: Env, prefix: string): Env {
  return {
    ...env,
    PATH: `${join(prefix, 'bin')}${env.PATH ? `:${env.PATH}` : ''}`,
    CONDA_PREFIX: prefix,
  };
}

/** `uv run` options that take a value (uv's reference, "uv run"); the rest are flags. */
const UV_RUN_VALUES = new Set([
  '-p',
  '--python',
  '--with',
  '--with-editable',
  '--with-requirements',
  '--extra',
  '--group',
  '--only-group',
  '--no-group',
  '--package',
  '--directory',
  '--project',
  '--env-file',
  '--index',
  '--default-index',
  '-i',
  '--index-url',
  '--extra-index-url',
  '-f',
  '--find-links',
  '--index-strategy',
  '--keyring-provider',
  '--resolution',
  '--prerelease',
  '--fork-strategy',
  '--exclude-newer',
  '--link-mode',
  '-C',
  '--config-setting',
  '--no-build-isolation-package',
  '-P',
  '--upgrade-package',
  '--reinstall-package',
  '--refresh-package',
  '--cache-dir',
  '--color',
  '--config-file',
  '--python-preference',
  '--python-platform',
  '--no-binary-package',
  '--only-binary-package',
]);

function viaUv(outer: Unwrapped, args: readonly string[], cwd: string): Unwrapping {
  let project: string | null = null;
  let module: string | null = null;
  let index = 0;
  for (; index < args.length; index += 1) {
    const arg = args[index] as string;
    if (arg === '--') {
      index += 1;
      break;
    }
    if (!arg.startsWith('-')) break;
    if (arg === '-m' || arg === '--module') {
      module = args[++index] ?? '';
      index += 1;
      break;
    }
    const [flag, attached] = arg.includes('=') ? arg.split(/=(.*)/s) : [arg, undefined];
    if (!UV_RUN_VALUES.has(flag as string)) continue;
    const value = attached ?? args[++index] ?? '';
    if (flag === '--project' || flag === '--directory') project = resolve(cwd, value);
  }
  const root = nearestWith(outer.root, project ?? cwd, (dir) =>
    existsSync(join(dir, 'pyproject.toml')),
  );
  if (root === null) {
    return {
      unreadable: 'uv run: no pyproject.toml in this folder or above it',
      via: outer.via,
      clears: outer.clears,
    };
  }
  const named = outer.env.UV_PROJECT_ENVIRONMENT;
  const venv = named ? resolve(root, named) : join(root, '.venv');
  const words =
    module === null ? args.slice(index) : ['python', '-m', module, ...args.slice(index)];
  return inner(outer, words, 'uv run', {
    env: { ...activated(outer.env, venv), VIRTUAL_ENV: venv },
  });
}

/** `pixi run` options that take a value. */
const PIXI_RUN_VALUES = new Set([
  '--manifest-path',
  '-e',
  '--environment',
  '--color',
  '--executable',
]);

function viaPixi(outer: Unwrapped, args: readonly string[], cwd: string): Unwrapping {
  let manifest: string | null = null;
  let environment = 'default';
  let clears = false;
  let index = 0;
  for (; index < args.length; index += 1) {
    const arg = args[index] as string;
    if (!arg.startsWith('-')) break;
    const [flag, attached] = arg.includes('=') ? arg.split(/=(.*)/s) : [arg, undefined];
    if (flag === '--clean-env') clears = true;
    if (!PIXI_RUN_VALUES.has(flag as string)) continue;
    const value = attached ?? args[++index] ?? '';
    if (flag === '--manifest-path') manifest = resolve(cwd, value);
    if (flag === '-e' || flag === '--environment') environment = value;
  }
  const root =
    manifest !== null
      ? dirname(manifest)
      : nearestWith(outer.root, cwd, (dir) => {
          if (existsSync(join(dir, 'pixi.toml'))) return true;
          const pyproject = attempt(() => readFileSync(join(dir, 'pyproject.toml'), 'utf8'));
          return pyproject?.includes('[tool.pixi') === true;
        });
  if (root === null) {
    return {
      unreadable: 'pixi run: no pixi.toml in this folder or above it',
      via: outer.via,
      clears: clears ? 'pixi run --clean-env' : outer.clears,
    };
  }
  const prefix = join(root, '.pixi', 'envs', environment);
  return inner(
    outer,
    args.slice(index),
    `pixi run${clears ? ' --clean-env' : ''}${environment === 'default' ? '' : ` -e ${environment}`}`,
    { env: activated(outer.env, prefix), clears: clears ? 'pixi run --clean-env' : null },
  );
}

/** The nearest folder from `start` up that `holds` says is the project; null when none. */
function nearestWith(root: string, start: string, holds: (dir: string) => boolean): string | null {
  for (let dir = start; ; dir = dirname(dir)) {
    if (holds(inRoot(root, dir))) return dir;
    if (dirname(dir) === dir) return null;
  }
}

/**
 * apptainer's action options that take no value (its boolean flags,
 * cmd/internal/cli/action_flags.go): every other option of `exec` takes one.
 */
const APPTAINER_FLAGS = new Set([
  'allow-setuid',
  'boot',
  'cleanenv',
  'e',
  'compat',
  'compat32',
  'contain',
  'c',
  'containall',
  'C',
  'disable-cache',
  'fakeroot',
  'f',
  'ignore-fakeroot-command',
  'ignore-subuid',
  'ignore-userns',
  'intel-hpu',
  'ipc',
  'i',
  'keep-privs',
  'net',
  'n',
  'no-eval',
  'no-home',
  'no-init',
  'no-nv',
  'no-pid',
  'no-privs',
  'no-rocm',
  'no-umask',
  'nv',
  'nvccli',
  'oom-kill-disable',
  'pid',
  'p',
  'rocm',
  'sharens',
  'underlay',
  'unsquash',
  'userns',
  'u',
  'uts',
  'writable',
  'w',
  'writable-tmpfs',
]);
/** apptainer's global options before the command (`apptainer --debug exec ...`) that take a value. */
const APPTAINER_GLOBAL_VALUES = new Set(['-c', '--config']);
/** A container's PATH where neither it nor the user says otherwise (apptainer's default). */
const CONTAINER_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

function viaApptainer(outer: Unwrapped, tool: string, args: readonly string[]): Unwrapping {
  let index = 0;
  while (index < args.length && (args[index] as string).startsWith('-')) {
    index += APPTAINER_GLOBAL_VALUES.has(args[index] as string) ? 2 : 1;
  }
  const action = args[index];
  if (action !== 'exec') {
    return {
      unreadable:
        `${tool} ${action ?? ''} runs the image's own script, which nccl-run cannot read`.replace(
          /\s+/g,
          ' ',
        ),
      via: outer.via,
      clears: outer.clears,
    };
  }
  let clean: string | null = null;
  let path: string | null = null;
  for (index += 1; index < args.length; index += 1) {
    const arg = args[index] as string;
    if (!arg.startsWith('-')) break;
    const [flag = '', attached] = arg.includes('=') ? arg.split(/=(.*)/s) : [arg, undefined];
    const bare = flag.replace(/^--?/, '');
    if (APPTAINER_FLAGS.has(bare)) {
      if (bare === 'cleanenv' || bare === 'e' || bare === 'containall' || bare === 'C') {
        clean = flag;
      }
      continue;
    }
    const value = attached ?? args[++index] ?? '';
    if (bare === 'env' && value.startsWith('PATH=')) path = value.slice('PATH='.length);
  }
  const image = args[index];
  const shown = `${tool} exec ${image ?? ''}`.trim();
  const clears = clean === null ? outer.clears : `${tool} exec ${clean}`;
  if (image === undefined) return { unreadable: `${shown} names no image`, via: outer.via, clears };
  const sandbox = inRoot(outer.root, image);
  if (/^[a-z]+:\/\//.test(image) || !isDir(sandbox)) {
    return {
      unreadable: `${shown}: an image file or a registry's image, which nccl-run does not unpack (it reads a sandbox folder)`,
      via: [...outer.via, shown],
      clears,
    };
  }
  const base: Env = clean === null ? outer.env : {};
  const containerPath =
    path ??
    outer.env.APPTAINERENV_PATH ??
    outer.env.SINGULARITYENV_PATH ??
    imagePath(sandbox) ??
    CONTAINER_PATH;
  return inner(outer, args.slice(index + 1), shown, {
    root: resolve(sandbox),
    env: { ...base, PATH: containerPath },
    clears,
  });
}

/** The PATH an image built from Docker's sets (/.singularity.d/env/10-docker2singularity.sh). */
function imagePath(sandbox: string): string | null {
  const script = attempt(() =>
    readFileSync(join(sandbox, '.singularity.d/env/10-docker2singularity.sh'), 'utf8'),
  );
  return script === undefined ? null : (/^export PATH="([^"]*)"/m.exec(script)?.[1] ?? null);
}

/** chroot [--userspec=U:G] [--groups=G] [--skip-chdir] ROOT CMD. */
function viaChroot(outer: Unwrapped, args: readonly string[], cwd: string): Unwrapping {
  let index = 0;
  while (index < args.length && (args[index] as string).startsWith('--')) index += 1;
  const newRoot = args[index];
  if (newRoot === undefined)
    return { unreadable: 'chroot names no root', via: outer.via, clears: outer.clears };
  const root = isAbsolute(newRoot) ? inRoot(outer.root, newRoot) : resolve(cwd, newRoot);
  return inner(outer, args.slice(index + 1), `chroot ${newRoot}`, { root: resolve(root) });
}
