/**
 * Port 0 against the real torchrun of 1.13, 2.6 and 2.14 (README "Locally",
 * src/job/port-zero.ts, the records' staticPortZero), on one lab node (a
 * network namespace of its own, traffic on its loopback only):
 * - a c10d endpoint at localhost:0 runs through nccl-run: the workers are
 *   told the port the store bound, and a Gloo all-reduce completes;
 * - a static --master_port 0, run by torchrun alone, tells its workers
 *   MASTER_PORT=0, which is why their process group then waits for ever
 *   (the workers report the port and stop before joining, so nothing
 *   here waits on the hang); nccl-run refuses it with 64 and starts nothing.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Lab } from '../lab/netns.js';
import { tier } from '../lab/tier.js';
import { torchStack, torchUnavailable } from '../lab/torch-job.js';
import { TORCH_VERSIONS } from '../lab/torch-parser.js';

const NCCL_RUN = fileURLToPath(new URL('../../bin/nccl-run', import.meta.url));
const SCRIPT = fileURLToPath(new URL('../fixtures/port-report.py', import.meta.url));

for (const version of TORCH_VERSIONS) {
  tier(`port 0 on the real torchrun ${version}`, torchUnavailable(version), () => {
    const lab = new Lab(`pz${version.replace('.', '')}`);
    const stack = () => torchStack(version);
    beforeAll(async () => {
      await lab.host('n');
    });
    afterAll(async () => {
      await lab.cleanup();
    });

    const run = (command: string, args: readonly string[]) =>
      lab.exec('n', command, args, {
        env: { PATH: process.env.PATH ?? '', ...stack().env },
        extendEnv: false,
        reject: false,
        timeout: 120_000,
      });
    /** `args` after the stack's torchrun and its options, alone or behind nccl-run. */
    const torchrun = (args: readonly string[]) => {
      const [launcher, ...launcherArgs] = stack().torchrun as [string, ...string[]];
      return run(launcher, [...launcherArgs, ...stack().options, ...args]);
    };
    const throughNcclRun = (args: readonly string[]) =>
      run(NCCL_RUN, [
        '--torchrun',
        stack().torchrun.join(' '),
        '--torch-version',
        version,
        ...stack().options,
        ...args,
      ]);
    /** The workers' "report" lines, wherever torchrun's prefixes put them. */
    const reports = (stdout: unknown) =>
      [...String(stdout).matchAll(/report (\d+ (?:MASTER_PORT|sum)=\d+)/g)]
        .map((m) => String(m[1]))
        .sort();

    it('c10d at localhost:0 through nccl-run: the workers get the port the store bound, and Gloo completes', async () => {
      const result = await throughNcclRun([
        '--nnodes=1',
        '--nproc_per_node=2',
        '--rdzv_backend=c10d',
        '--rdzv_endpoint=localhost:0',
        SCRIPT,
        '--allreduce',
      ]);
      expect(result.exitCode, String(result.stderr)).toBe(0);
      const lines = reports(result.stdout);
      const ports = lines.flatMap((line) => /MASTER_PORT=(\d+)/.exec(line)?.[1] ?? []);
      expect(ports).toHaveLength(2);
      expect(ports[0]).not.toBe('0');
      expect(ports[1]).toBe(ports[0]);
      expect(lines).toEqual(expect.arrayContaining(['0 sum=2', '1 sum=2']));
    });

    it('static --master_port 0: torchrun alone tells its workers MASTER_PORT=0; nccl-run refuses it first', async () => {
      const staticPortZero = ['--nnodes=1', '--nproc_per_node=1', '--master_port=0', SCRIPT];
      const alone = await torchrun(staticPortZero);
      expect(alone.exitCode, String(alone.stderr)).toBe(0);
      expect(reports(alone.stdout)).toEqual(['0 MASTER_PORT=0']);

      const refused = await throughNcclRun(staticPortZero);
      expect(refused.exitCode).toBe(64);
      expect(refused.stderr).toMatch(
        /--master_port: bad value '0'.*--rdzv[-_]endpoint=localhost:0/,
      );
      expect(reports(refused.stdout)).toEqual([]);
    });
  });
}
