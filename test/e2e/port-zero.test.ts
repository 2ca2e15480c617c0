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
import { expect, it } from 'vitest';
import { oneNodeTorch, reports, PORT_REPORT as SCRIPT } from '../lab/one-node-torch.js';
import { tier } from '../lab/tier.js';
import { torchUnavailable } from '../lab/torch-job.js';
import { TORCH_VERSIONS } from '../lab/torch-parser.js';

for (const version of TORCH_VERSIONS) {
  tier(`port 0 on the real torchrun ${version}`, torchUnavailable(version), () => {
    const { torchrun, throughNcclRun } = oneNodeTorch(version, `pz${version.replace('.', '')}`);

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
