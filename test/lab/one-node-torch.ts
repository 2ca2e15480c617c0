/**
 * One lab node (a network namespace of its own, traffic on its loopback
 * only) running a torch stack's real torchrun, alone or behind nccl-run, for
 * the tiers that check what each torch does with a one-node job
 * (test/e2e/port-zero.test.ts, one-node-master.test.ts), with a TMPDIR of
 * the lab's own (debian-root.ts labTmpDir).
 */
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll } from 'vitest';
import { labTmpDir } from './debian-root.js';
import { Lab } from './netns.js';
import { type TorchVersion, torchStack } from './torch-job.js';

const NCCL_RUN = fileURLToPath(new URL('../../bin/nccl-run', import.meta.url));
/** A worker that reports the port it was given and, with --allreduce, a Gloo all-reduce's sum. */
export const PORT_REPORT = fileURLToPath(new URL('../fixtures/port-report.py', import.meta.url));

/** The lab node for `version`'s tier (made before its tests, removed after). */
export function oneNodeTorch(version: TorchVersion, tag: string) {
  const lab = new Lab(tag);
  const stack = () => torchStack(version);
  let tmp = '';
  beforeAll(async () => {
    tmp = labTmpDir(`${tag}-`);
    await lab.host('n');
  });
  afterAll(async () => {
    await lab.cleanup();
    if (tmp !== '') rmSync(tmp, { recursive: true, force: true });
  });

  const run = (command: string, args: readonly string[]) =>
    lab.exec('n', command, args, {
      env: { PATH: process.env.PATH ?? '', TMPDIR: tmp, ...stack().env },
      extendEnv: false,
      reject: false,
      timeout: 120_000,
    });
  return {
    /** `args` after the stack's torchrun and its options. */
    torchrun(args: readonly string[]) {
      const [launcher, ...launcherArgs] = stack().torchrun as [string, ...string[]];
      return run(launcher, [...launcherArgs, ...stack().options, ...args]);
    },
    /** The same behind nccl-run (`ncclRunArgs` first), with the torch declared. */
    throughNcclRun(args: readonly string[], ncclRunArgs: readonly string[] = []) {
      return run(NCCL_RUN, [
        ...ncclRunArgs,
        '--torchrun',
        stack().torchrun.join(' '),
        '--torch-version',
        version,
        ...stack().options,
        ...args,
      ]);
    },
  };
}

/** The workers' "report" lines of port-report.py, wherever torchrun's prefixes put them. */
export function reports(stdout: unknown): string[] {
  return [...String(stdout).matchAll(/report (\d+ (?:MASTER_PORT|sum)=\d+)/g)]
    .map((m) => String(m[1]))
    .sort();
}
