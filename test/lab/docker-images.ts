/**
 * The Docker tier's images (shared/LAB.md): no registry is reachable, so the
 * two base images Dockerfile.example names come from this machine, and the
 * example is then built as written, with --build-arg naming them.
 *
 * - The "PyTorch image": the Debian 13 lab root (torch 2.6, NCCL 2.22)
 *   imported with `tar | docker import`, plus the lab's libuv workaround for
 *   Debian's torch 2.6 (never product behaviour, debian-root.ts) and an apt
 *   source that is the tier's package mirror (apt-mirror.mjs) instead of
 *   deb.debian.org, as an air-gapped site points its images at its mirror.
 * - The "node image": Node 20 at /usr/local/bin/node, as the official image
 *   has it, with npm beside it: this machine's node and npm, the libraries
 *   they load and busybox's sh, in a small root. It carries an npm cache the
 *   tier fills first from the registry (the one network access the build
 *   needs, made here on the host, not by the build), and npm set offline, so
 *   the build's `npm ci` is served from it.
 *
 * Each image is tagged with a hash of what made it and reused while that is
 * unchanged: the engine's data root persists in the lab cache.
 */
import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { CHECKOUT, LIBUV_WORKAROUND_PATH, labRoot } from './debian-root.js';
import {
  DOCKER_CLI,
  DOCKER0_ADDRESS,
  type DockerEngine,
  dockerUnavailable,
} from './docker-engine.js';

export const MIRROR_PORT = 8780;
const MIRROR_SCRIPT = fileURLToPath(new URL('./apt-mirror.mjs', import.meta.url));

/**
 * The Debian 13 lab root the images are made from, built on first use, or
 * why a tier that needs them cannot run: no Docker engine to make them on,
 * no root, or this host being that root (it cannot import itself). The
 * Docker tier runs them, and the Kubernetes tier loads them into podman.
 */
export function imageRoot(): { path: string; unavailable: null } | { unavailable: string } {
  if (dockerUnavailable !== null) return { unavailable: dockerUnavailable };
  const root = labRoot('trixie');
  if ('error' in root) return { unavailable: root.error };
  if (root.path === '/') {
    return {
      unavailable:
        'the Docker images are imported from the Debian 13 lab root, and this host is that root',
    };
  }
  return { path: root.path, unavailable: null };
}

/** The image `nccl-run init compose` and the README run. */
export const TRAIN_IMAGE = 'nccl-run-train:latest';

const hash = (...parts: string[]) =>
  createHash('sha256').update(parts.join('\0')).digest('hex').slice(0, 12);

async function hasImage(engine: DockerEngine, tag: string): Promise<boolean> {
  const inspected = await engine.docker(['image', 'inspect', tag], { reject: false });
  return inspected.exitCode === 0;
}

/** `docker build` of a Dockerfile given as text, in a context folder. */
export async function buildFromText(
  engine: DockerEngine,
  tag: string,
  dockerfile: string,
  context: string,
): Promise<void> {
  await engine.docker(['build', '--quiet', '-t', tag, '-f', '-', context], { input: dockerfile });
}

/** The lab root as the "PyTorch image" (see the file's comment). */
export async function pytorchImage(engine: DockerEngine, labRoot: string): Promise<string> {
  const workaround = readFileSync(join(LIBUV_WORKAROUND_PATH, 'sitecustomize.py'), 'utf8');
  const rootTag = `nccl-run-lab/trixie-root:${hash(labRoot)}`;
  const recipe = `
FROM ${rootTag}
COPY sitecustomize.py /opt/nccl-run-lab/python/sitecustomize.py
ENV PYTHONPATH=/opt/nccl-run-lab/python USE_LIBUV=0
RUN rm -rf /etc/apt/sources.list.d/* /var/lib/apt/lists/* \\
 && echo 'deb [trusted=yes] http://${DOCKER0_ADDRESS}:${MIRROR_PORT}/ ./' >/etc/apt/sources.list
`;
  const tag = `nccl-run-lab/pytorch:${hash(labRoot, recipe, workaround)}`;
  if (await hasImage(engine, tag)) return tag;
  if (!(await hasImage(engine, rootTag))) {
    await execa(
      'bash',
      [
        '-c',
        'set -o pipefail; tar --one-file-system -C "$1" -c . | "$2" import - "$3" >/dev/null',
        'bash',
        labRoot,
        DOCKER_CLI,
        rootTag,
      ],
      { env: engine.env, extendEnv: false },
    );
  }
  const context = mkdtempSync(join(tmpdir(), 'ncr-docker-pytorch-'));
  try {
    writeFileSync(join(context, 'sitecustomize.py'), workaround);
    await buildFromText(engine, tag, recipe, context);
  } finally {
    rmSync(context, { recursive: true, force: true });
  }
  return tag;
}

/** The shared libraries an executable loads, as ldd lists them (paths on this host); none for a static one. */
async function librariesOf(executable: string): Promise<string[]> {
  const { stdout } = await execa('ldd', [executable], { reject: false });
  return [...stdout.matchAll(/(\/\S+)\s+\(0x/g)].map((match) => match[1] as string);
}

function copyInto(root: string, path: string): void {
  mkdirSync(join(root, dirname(path)), { recursive: true });
  copyFileSync(realpathSync(path), join(root, path));
}

/** This machine's node and npm in a small root, with a filled npm cache (see the file's comment). */
export async function nodeImage(engine: DockerEngine): Promise<string> {
  const node = realpathSync((await execa('sh', ['-c', 'command -v node'])).stdout.trim());
  const npmDir = realpathSync(
    join(dirname(realpathSync((await execa('sh', ['-c', 'command -v npm'])).stdout.trim())), '..'),
  );
  const { stdout: nodeVersion } = await execa(node, ['--version']);
  const lock = readFileSync(join(CHECKOUT, 'package-lock.json'), 'utf8');
  const npmVersion = JSON.parse(readFileSync(join(npmDir, 'package.json'), 'utf8')).version;
  // The recipe's own version: bump it when the root below changes.
  const tag = `nccl-run-lab/node:${hash('busybox applets', nodeVersion, npmVersion, lock)}`;
  if (await hasImage(engine, tag)) return tag;

  const root = mkdtempSync(join(tmpdir(), 'ncr-docker-node-'));
  try {
    const busybox = realpathSync('/bin/busybox');
    for (const library of new Set([...(await librariesOf(node)), ...(await librariesOf(busybox))]))
      copyInto(root, library);
    mkdirSync(join(root, 'usr/local/bin'), { recursive: true });
    copyFileSync(node, join(root, 'usr/local/bin/node'));
    cpSync(npmDir, join(root, 'usr/local/lib/node_modules/npm'), { recursive: true });
    symlinkSync('../lib/node_modules/npm/bin/npm-cli.js', join(root, 'usr/local/bin/npm'));
    mkdirSync(join(root, 'bin'));
    mkdirSync(join(root, 'usr/bin'), { recursive: true });
    copyFileSync(busybox, join(root, 'bin/busybox'));
    // sh, env, chmod and the rest of what a slim Debian image has in coreutils.
    const { stdout: applets } = await execa(busybox, ['--list']);
    for (const applet of applets.split('\n').filter((name) => /^[\w.[-]+$/.test(name)))
      if (applet !== 'busybox') symlinkSync('busybox', join(root, 'bin', applet));
    symlinkSync('../../bin/busybox', join(root, 'usr/bin/env'));
    mkdirSync(join(root, 'etc'));
    writeFileSync(join(root, 'etc/passwd'), 'root:x:0:0:root:/root:/bin/sh\n');
    writeFileSync(join(root, 'etc/group'), 'root:x:0:\n');
    mkdirSync(join(root, 'tmp'));
    chmodSync(join(root, 'tmp'), 0o1777);

    // The npm cache the build's offline `npm ci` is served from, filled from
    // the registry with this checkout's lockfile.
    const project = mkdtempSync(join(tmpdir(), 'ncr-docker-npm-'));
    try {
      for (const file of ['package.json', 'package-lock.json'])
        copyFileSync(join(CHECKOUT, file), join(project, file));
      await execa(
        'npm',
        ['ci', '--ignore-scripts', '--no-audit', '--no-fund', '--cache', join(root, 'root/.npm')],
        { cwd: project },
      );
    } finally {
      rmSync(project, { recursive: true, force: true });
    }

    await execa(
      'bash',
      [
        '-c',
        'set -o pipefail; r=$1 && shift && tar -C "$r" -c . | "$@" >/dev/null',
        'bash',
        root,
        DOCKER_CLI,
        'import',
        '--change',
        'ENV PATH=/usr/local/bin:/usr/bin:/bin',
        '--change',
        'ENV HOME=/root',
        '--change',
        'ENV npm_config_offline=true npm_config_update_notifier=false',
        '-',
        tag,
      ],
      { env: engine.env, extendEnv: false },
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  return tag;
}

/**
 * Builds Dockerfile.example as written (the checkout is the context), with
 * the tier's mirror serving its apt-get: with BuildKit (DOCKER_BUILDKIT=1)
 * as `nccl-run-train:latest`, or with the classic builder, Docker 20.10's
 * default. Returns the build's output.
 */
export async function buildTrainImage(
  engine: DockerEngine,
  images: { node: string; pytorch: string },
  debs: string,
  { tag = TRAIN_IMAGE, buildkit = true }: { tag?: string; buildkit?: boolean } = {},
): Promise<{ output: string }> {
  const mirror = engine.inNamespace('node', [
    MIRROR_SCRIPT,
    join(debs, 'debs'),
    DOCKER0_ADDRESS,
    String(MIRROR_PORT),
  ]);
  let mirrorLog = '';
  const listening = new Promise<void>((resolve, reject) => {
    mirror.stdout?.on('data', (chunk: Buffer) => {
      mirrorLog += chunk.toString();
      if (mirrorLog.includes('listening\n')) resolve();
    });
    mirror.once('exit', (code) => reject(new Error(`the apt mirror exited (${code})`)));
  });
  try {
    await listening;
    const built = await engine.docker(
      [
        'build',
        ...(buildkit ? ['--progress=plain'] : []),
        '-f',
        'Dockerfile.example',
        '--build-arg',
        `NODE_IMAGE=${images.node}`,
        '--build-arg',
        `PYTORCH_IMAGE=${images.pytorch}`,
        '-t',
        tag,
        '.',
      ],
      {
        cwd: CHECKOUT,
        all: true,
        env: { ...engine.env, DOCKER_BUILDKIT: buildkit ? '1' : '0' },
      },
    );
    return { output: String(built.all ?? '') };
  } finally {
    mirror.kill('SIGTERM');
    await mirror.catch(() => {});
  }
}
