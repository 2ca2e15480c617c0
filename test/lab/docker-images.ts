/**
 * The Docker tier's images (shared/LAB.md): no registry is reachable, so the
 * base image Dockerfile.example names comes from this machine, and the
 * example is then built as written, with --build-arg naming it, on the
 * single executable `npm run release` writes (TRAIN_BINARY).
 *
 * - The "PyTorch image": the Debian 13 lab root (torch 2.6, NCCL 2.22)
 *   imported with `tar | docker import`, plus the lab's libuv workaround for
 *   Debian's torch 2.6 (never product behaviour, debian-root.ts) and an apt
 *   source that is the tier's package mirror (apt-mirror.mjs) instead of
 *   deb.debian.org, as an air-gapped site points its images at its mirror,
 *   and /workspace as its working folder, as the pytorch/pytorch images have.
 *
 * Each image is tagged with a hash of what made it and reused while that is
 * unchanged: the engine's data root persists in the lab cache.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

/**
 * The one file Dockerfile.example copies into the image (its NCCL_RUN_BINARY
 * default): the x64 single executable `npm run release` writes. The tier
 * builds nothing of nccl-run itself: it tests that file, as a user builds it.
 */
export const TRAIN_BINARY = join(CHECKOUT, 'release', 'nccl-run-linux-x64');

const hash = (...parts: string[]) =>
  createHash('sha256').update(parts.join('\0')).digest('hex').slice(0, 12);

async function hasImage(engine: DockerEngine, tag: string): Promise<boolean> {
  const inspected = await engine.docker(['image', 'inspect', tag], { reject: false });
  return inspected.exitCode === 0;
}

/** An image's size in bytes, as `docker image inspect` gives it: its layers and its base's. */
export async function imageSize(engine: DockerEngine, tag: string): Promise<number> {
  const { stdout } = await engine.docker(['image', 'inspect', '--format', '{{.Size}}', tag]);
  return Number(stdout);
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
# As the pytorch/pytorch images have it: a pod's \`train.py\` is found there.
WORKDIR /workspace
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

/**
 * Builds Dockerfile.example as written (the checkout is the context, and
 * TRAIN_BINARY the one file it copies), with the tier's mirror serving its
 * apt-get: with BuildKit (DOCKER_BUILDKIT=1) as `nccl-run-train:latest`, or
 * with the classic builder, Docker 20.10's default. Returns the build's
 * output; throws, saying what makes it, when TRAIN_BINARY is missing.
 */
export async function buildTrainImage(
  engine: DockerEngine,
  pytorch: string,
  debs: string,
  { tag = TRAIN_IMAGE, buildkit = true }: { tag?: string; buildkit?: boolean } = {},
): Promise<{ output: string }> {
  if (!existsSync(TRAIN_BINARY)) {
    throw new Error(
      `${TRAIN_BINARY} is missing, the one file Dockerfile.example copies into the image: run npm run release (or \`npm run build && node scripts/release.js --arch x64\`) first`,
    );
  }
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
        `PYTORCH_IMAGE=${pytorch}`,
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
