/**
 * Readiness in a real Docker container (issue 29), on the Docker tier's own
 * engine (test/lab/docker-engine.ts): the reader of the built dist/ runs in
 * a container of a bare image (this machine's /usr mounted read-only for its
 * node), as `docker run` makes it:
 * - Docker's default /dev/shm (64 MiB), `--shm-size=1g`, and `--ipc=none`
 *   (no /dev/shm at all);
 * - `--ulimit memlock=65536:65536` without CAP_IPC_LOCK (Docker's default
 *   capabilities lack it), and the same with `--cap-add IPC_LOCK`.
 * The container's own /.dockerenv makes the fixes Docker's. The GPUs are
 * fake (a container here has none): the checks get four, as the driver
 * would list them, beside the container's real facts.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { NodeReadiness } from '../../src/readiness/node-readiness.js';
import { readiness } from '../../src/readiness/readiness.js';
import { fakeGpus, jobNeeds } from '../fixtures/readiness.js';
import { CHECKOUT } from '../lab/debian-root.js';
import { DOCKER_CLI, DockerEngine, dockerUnavailable } from '../lab/docker-engine.js';
import { tier } from '../lab/tier.js';

const IMAGE = 'nccl-run-lab/bare:1';
const READ = `import { readNodeReadiness } from '/nccl-run/dist/readiness/read-node-readiness.js';
process.stdout.write(JSON.stringify(readNodeReadiness(process.env, null)));`;

tier('Readiness in a real Docker container', dockerUnavailable, () => {
  let engine: DockerEngine | undefined;
  const work = mkdtempSync(join(tmpdir(), 'ncr-ready-docker-'));

  beforeAll(async () => {
    // No compose here: the engine's plugin folder may point nowhere.
    engine = await DockerEngine.start(join(work, 'no-plugins'));
    if ((await engine.docker(['image', 'inspect', IMAGE], { reject: false })).exitCode !== 0) {
      // A bare root: /usr comes from this machine at run time (Debian's merged /usr).
      const root = join(work, 'root');
      for (const dir of ['usr', 'tmp', 'etc', 'dev', 'proc', 'sys', 'nccl-run'])
        mkdirSync(join(root, dir), { recursive: true });
      for (const link of ['bin', 'lib', 'lib64', 'sbin'])
        symlinkSync(`usr/${link}`, join(root, link));
      await execa(
        'bash',
        [
          '-c',
          'set -o pipefail; tar -C "$1" -c . | "$2" import - "$3" >/dev/null',
          'bash',
          root,
          DOCKER_CLI,
          IMAGE,
        ],
        { env: engine.env, extendEnv: false },
      );
    }
  }, 300_000);

  afterAll(async () => {
    await engine?.stop();
    rmSync(work, { recursive: true, force: true });
  }, 120_000);

  async function readIn(runOptions: string[]): Promise<NodeReadiness> {
    const { stdout } = await (engine as DockerEngine).docker([
      'run',
      '--rm',
      '--network=none',
      '-v=/usr:/usr:ro',
      `-v=${CHECKOUT}:/nccl-run:ro`,
      ...runOptions,
      IMAGE,
      'node',
      '--input-type=module',
      '-e',
      READ,
    ]);
    return JSON.parse(String(stdout)) as NodeReadiness;
  }
  /** Four local ranks of a one-node job on NCCL 2.22, with four fake GPUs. */
  const shmFinding = (node: NodeReadiness) =>
    readiness(jobNeeds({ nprocPerNode: '4', nnodes: { min: 1, max: 1 } }), {
      ...node,
      gpus: fakeGpus(4),
    }).find((finding) => finding.check === 'shm');

  it("Docker's default 64 MiB /dev/shm: four local ranks may not fit, and the fix is Docker's", async () => {
    const node = await readIn([]);
    expect(node.contexts).toEqual(['docker']);
    expect(node.shm).toMatchObject({ unusable: null, sizeBytes: 64 * 2 ** 20, tmpfs: true });
    expect(shmFinding(node)).toMatchObject({
      level: 'warning',
      evidence: expect.stringMatching(
        /^\/dev\/shm: 64 MiB tmpfs, 64 MiB free; NCCL 2\.22\.3 may put up to 147 MiB there/,
      ),
      fix: 'docker run --shm-size=1g (or --ipc=host); compose: shm_size: 1gb',
    });
  });

  it('--shm-size=1g: the same job fits', async () => {
    const node = await readIn(['--shm-size=1g']);
    expect(node.shm).toMatchObject({ sizeBytes: 2 ** 30, tmpfs: true });
    expect(shmFinding(node)?.level).toBe('ok');
  });

  it('--ipc=none: no /dev/shm at all, refused with several local ranks', async () => {
    const node = await readIn(['--ipc=none']);
    expect(node.shm.unusable).toBe('/dev/shm does not exist');
    expect(shmFinding(node)?.level).toBe('refused');
  });

  it('--ulimit memlock=65536:65536 without CAP_IPC_LOCK is refused under --require-transport ib; with it, passed', async () => {
    const memlock = (node: NodeReadiness) =>
      readiness(jobNeeds({ requireTransport: 'ib' }), { ...node, gpus: fakeGpus(8) }).find(
        (finding) => finding.check === 'memlock',
      );
    const limited = await readIn(['--ulimit=memlock=65536:65536']);
    expect(limited).toMatchObject({ memlock: { soft: 65536, hard: 65536 }, ipcLock: false });
    expect(memlock(limited)).toMatchObject({
      level: 'refused',
      fix: 'docker run --ulimit memlock=-1:-1; compose: ulimits: { memlock: -1 }',
    });
    const locked = await readIn(['--ulimit=memlock=65536:65536', '--cap-add=IPC_LOCK']);
    expect(locked.ipcLock).toBe(true);
    expect(memlock(locked)?.level).toBe('ok');
  });
});
