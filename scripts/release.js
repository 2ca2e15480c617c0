#!/usr/bin/env node
/**
 * Every artifact nccl-run ships, into release/ (`npm run release`, after
 * `npm run build`), with a SHA256SUMS file (`sha256sum -c SHA256SUMS`):
 *
 * - nccl-run-linux-x64, nccl-run-linux-arm64: Node's single executable
 *   application over the official Node binary (official-node.js): its main
 *   script sea-loader.cjs runs nccl-run (src/cli/single-executable.ts) with
 *   the V8 code cache a dry run through a first build left, made by that
 *   very Node; on arm64 by the arm64 Node under qemu-user, since a code
 *   cache made on x64 is rejected on arm64.
 * - nccl_run-VERSION-py3-none-manylinux_2_28_{x86_64,aarch64}.whl: the binary
 *   as the wheel's script, so `pip install` puts `nccl-run` beside torchrun
 *   in the venv (as ruff and uv ship theirs), and nccl-run(1) as its data
 *   file share/man/man1/nccl-run.1, which pip installs under the venv's
 *   prefix, where man-db's manpath finds it from the venv's bin on PATH;
 *   packed by the wheel project's own `wheel pack`.
 * - nccl-run-VERSION.tgz: the npm package, for machines with Node.js 20.12+.
 *
 *   node scripts/release.js [--arch x64|arm64]...   (default: both)
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';
import { inject } from 'postject';
import { buildOptions } from './bundle.js';
import { MAN_PAGE_PATH } from './man-page.js';
import { ARCHES, NODE_VERSION, officialNode } from './official-node.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

export const RELEASE_DIR = join(root, 'release');

/** Each platform: the binary's name, the wheel's platform tag, how its Node runs on this machine. */
export const PLATFORMS = {
  x64: { binary: 'nccl-run-linux-x64', wheelTag: 'manylinux_2_28_x86_64', runner: [] },
  arm64: {
    binary: 'nccl-run-linux-arm64',
    wheelTag: 'manylinux_2_28_aarch64',
    // Debian's qemu-user, with the arm64 glibc and libstdc++ of its cross packages.
    runner: ['qemu-aarch64', '-L', '/usr/aarch64-linux-gnu'],
  },
};

/** The fuse Node's single executables look for (Node's documentation, postject's --sentinel-fuse). */
const SENTINEL_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';

const version = () => JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;

/** A clean environment for the tools: this machine's NODE_EXTRA_CA_CERTS slows every Node start. */
const toolEnv = () => ({
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: process.env.HOME ?? '/',
});

/** The single executable's main script, which runs the program below with its code cache. */
const LOADER = join(root, 'scripts', 'sea-loader.cjs');

/** nccl-run as one CommonJS file, which the loader runs. */
export async function buildProgram(work) {
  const outfile = join(work, 'nccl-run.cjs');
  const options = buildOptions();
  await build({
    ...options,
    entryPoints: [join(root, 'src/cli/single-executable.ts')],
    format: 'cjs',
    target: `node${NODE_VERSION.split('.')[0]}`,
    outfile,
    define: {
      ...options.define,
      NCCL_RUN_NODE: JSON.stringify(`v${NODE_VERSION}`),
      'import.meta.url': 'undefined',
    },
  });
  return outfile;
}

/**
 * The blob of `program` for `arch`, made by that platform's official Node:
 * the loader, the program and, when given, the program's code cache.
 */
export function makeBlob(arch, program, work, cache = null) {
  const { runner } = PLATFORMS[arch];
  const blob = join(work, `${arch}.blob`);
  const config = join(work, `${arch}.sea.json`);
  writeFileSync(
    config,
    JSON.stringify({
      main: LOADER,
      output: blob,
      disableExperimentalSEAWarning: true,
      assets: { 'program.cjs': program, ...(cache === null ? {} : { 'program.cache': cache }) },
    }),
  );
  const [file, ...args] = [...runner, officialNode(arch), '--experimental-sea-config', config];
  execFileSync(file, args, { env: toolEnv(), stdio: 'pipe' });
  return blob;
}

/**
 * The code cache of `program` for `arch`: what a dry run through a first
 * build compiled (on arm64, the arm64 Node under qemu-user), as its own
 * Node made it: V8 rejects a cache of another V8 or another platform.
 */
async function makeCodeCache(arch, program, work) {
  const { runner } = PLATFORMS[arch];
  const first = await injectBlob(
    officialNode(arch),
    makeBlob(arch, program, work),
    join(work, `${arch}.first`),
  );
  const cache = join(work, `${arch}.cache`);
  const dryRun = ['--dry-run', '--iface', 'lo', '--verify', 'none', '--log-level', 'silent', 'x'];
  const [file, ...args] = [...runner, first, ...dryRun];
  execFileSync(file, args, {
    cwd: work,
    env: { ...toolEnv(), NCCLRUN_CODE_CACHE_OUT: cache },
    stdio: 'pipe',
  });
  return cache;
}

/** `out`: a copy of the Node binary `node` with `blob` injected, as Node's single executables are made. */
export async function injectBlob(node, blob, out) {
  copyFileSync(node, out);
  chmodSync(out, 0o755);
  await inject(out, 'NODE_SEA_BLOB', readFileSync(blob), { sentinelFuse: SENTINEL_FUSE });
  return out;
}

/** The single executable for `arch`: the official Node with the blob its own Node made. */
async function buildBinary(arch, program, work) {
  const { binary, runner } = PLATFORMS[arch];
  const cache = await makeCodeCache(arch, program, work);
  const out = await injectBlob(
    officialNode(arch),
    makeBlob(arch, program, work, cache),
    join(RELEASE_DIR, binary),
  );
  const [runFile, ...runArgs] = [...runner, out, '--version'];
  const said = execFileSync(runFile, runArgs, { env: toolEnv(), encoding: 'utf8' }).trim();
  if (!said.includes(`Node v${NODE_VERSION}`)) throw new Error(`${binary} --version said: ${said}`);
  return out;
}

/** Where a wheel's man page lies: `.data/data/` is installed under the prefix (PEP 427 "The .data directory"; pip's scheme "data"). */
export const WHEEL_MAN_PAGE = 'data/share/man/man1/nccl-run.1';

/** The wheel for `arch`: the binary as its one script, the man page, metadata beside them, packed by `wheel pack`. */
function buildWheel(arch, binary, work) {
  const { wheelTag } = PLATFORMS[arch];
  const ver = version();
  const tree = join(work, `wheel-${arch}`);
  const scripts = join(tree, `nccl_run-${ver}.data`, 'scripts');
  const info = join(tree, `nccl_run-${ver}.dist-info`);
  mkdirSync(scripts, { recursive: true });
  mkdirSync(info, { recursive: true });
  copyFileSync(binary, join(scripts, 'nccl-run'));
  chmodSync(join(scripts, 'nccl-run'), 0o755);
  const manPage = join(tree, `nccl_run-${ver}.data`, WHEEL_MAN_PAGE);
  mkdirSync(dirname(manPage), { recursive: true });
  if (!existsSync(MAN_PAGE_PATH))
    throw new Error(`${MAN_PAGE_PATH} is missing: npm run build writes it (scripts/man-page.js)`);
  copyFileSync(MAN_PAGE_PATH, manPage);
  const { description, license } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  writeFileSync(
    join(info, 'METADATA'),
    [
      'Metadata-Version: 2.1',
      'Name: nccl-run',
      `Version: ${ver}`,
      `Summary: ${description}`,
      `License: ${license}`,
      'Requires-Python: >=3.8',
      '',
    ].join('\n'),
  );
  writeFileSync(
    join(info, 'WHEEL'),
    [
      'Wheel-Version: 1.0',
      'Generator: nccl-run scripts/release.js',
      'Root-Is-Purelib: false',
      `Tag: py3-none-${wheelTag}`,
      '',
    ].join('\n'),
  );
  execFileSync(wheelPython(), ['-m', 'wheel', 'pack', tree, '--dest-dir', RELEASE_DIR], {
    env: toolEnv(),
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return join(RELEASE_DIR, `nccl_run-${ver}-py3-none-${wheelTag}.whl`);
}

/** A Python that has the wheel project: PATH's python3, else Debian's (python3-wheel). */
function wheelPython() {
  for (const python of ['python3', '/usr/bin/python3']) {
    try {
      execFileSync(python, ['-m', 'wheel', 'version'], { stdio: 'ignore', env: toolEnv() });
      return python;
    } catch {}
  }
  throw new Error(
    'no python3 with the wheel module: apt-get install python3-wheel (or pip install wheel)',
  );
}

/** The npm package, as `npm install -g` takes it. */
function buildNpmPackage() {
  const name = execFileSync('npm', ['pack', '--silent', '--pack-destination', RELEASE_DIR], {
    cwd: root,
    encoding: 'utf8',
  });
  return join(RELEASE_DIR, name.trim().split('\n').at(-1));
}

function writeChecksums() {
  const lines = readdirSync(RELEASE_DIR, { withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name !== 'SHA256SUMS')
    .map(({ name }) => {
      const digest = createHash('sha256')
        .update(readFileSync(join(RELEASE_DIR, name)))
        .digest('hex');
      return `${digest}  ${name}\n`;
    });
  writeFileSync(join(RELEASE_DIR, 'SHA256SUMS'), lines.join(''));
}

export async function release(arches = ARCHES) {
  rmSync(RELEASE_DIR, { recursive: true, force: true });
  const work = join(RELEASE_DIR, '.work');
  mkdirSync(work, { recursive: true });
  const program = await buildProgram(work);
  const made = [];
  for (const arch of arches) {
    const binary = await buildBinary(arch, program, work);
    made.push(binary, buildWheel(arch, binary, work));
  }
  made.push(buildNpmPackage());
  rmSync(work, { recursive: true, force: true });
  writeChecksums();
  return made;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { values } = parseArgs({ options: { arch: { type: 'string', multiple: true } } });
  for (const file of await release(values.arch ?? ARCHES)) {
    const bytes = readFileSync(file).length;
    process.stdout.write(`${file} (${(bytes / 2 ** 20).toFixed(1)} MiB)\n`);
  }
}
