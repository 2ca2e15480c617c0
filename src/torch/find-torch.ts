/**
 * The torch the launcher will import (SPEC "The stack"): the first folder of
 * its Python's sys.path holding a `torch` package, and the version that
 * package's generated `torch/version.py` states (`__version__ = '2.6.0+debian'`,
 * `'2.14.1+cu130'`).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { attempt } from '../host/attempt.js';
import { launcherPython } from './launcher-python.js';
import { sitePackages } from './site-packages.js';

export interface TorchInstall {
  /** torch.__version__; null when no torch/version.py was found or read. */
  version: string | null;
  /** Where it was read (torch/version.py), or why it is unknown. */
  source: string;
  /** The folder holding the torch package (a pip wheel's NCCL lies beside it). */
  sitePackages: string | null;
  /** The interpreter's sys.prefix (conda's lib/ holds its NCCL). */
  prefix: string | null;
}

const VERSION_LINE = /^__version__(?:\s*:\s*\w+)?\s*=\s*['"]([^'"]+)['"]/m;

export function findTorch(
  launcher: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  root = '',
): TorchInstall {
  const python = launcherPython(launcher, env, root);
  if ('problem' in python) {
    return { version: null, source: python.problem, sitePackages: null, prefix: null };
  }
  const { prefix, sitePackages: dirs } = sitePackages(python, env, root);
  const dir = dirs.find((site) => existsSync(join(root, site, 'torch', '__init__.py')));
  if (dir === undefined) {
    return {
      version: null,
      source: `no torch package for ${python.interpreter} (${python.via}) in ${dirs.join(', ')}`,
      sitePackages: null,
      prefix,
    };
  }
  const file = join(dir, 'torch', 'version.py');
  const text = attempt(() => readFileSync(join(root, file), 'utf8'));
  const version = text === undefined ? undefined : VERSION_LINE.exec(text)?.[1];
  return {
    version: version ?? null,
    source: version === undefined ? `${file} states no __version__` : file,
    sitePackages: dir,
    prefix,
  };
}
