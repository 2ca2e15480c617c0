/**
 * A one-node job whose master is this host written as the unspecified
 * address, against the real torchrun of 2.6 and 2.14 (src/job/
 * single-node.ts): torch runs it (its store binds every address, its
 * clients connect to this host), so nccl-run takes it for the single-node
 * job it is and exports loopback, where it refused --master_addr=0.0.0.0
 * with 69 before. The other spellings of this host (localhost, its
 * hostname, its addresses) are in the unit table and the resolve tests.
 */
import { expect, it } from 'vitest';
import { oneNodeTorch, PORT_REPORT, reports } from '../lab/one-node-torch.js';
import { tier } from '../lab/tier.js';
import { torchUnavailable } from '../lab/torch-job.js';

// torch 2.6 and 2.14 in the suite; 1.13 by hand (the same Gloo all-reduce, 0.0.0.0 and ::).
for (const version of ['2.6', '2.14'] as const) {
  tier(
    `a one-node master of 0.0.0.0 or :: on the real torchrun ${version}`,
    torchUnavailable(version),
    () => {
      const { torchrun, throughNcclRun } = oneNodeTorch(version, `on${version.replace('.', '')}`);

      // :: on the newest torch only: the rule is one, and each run takes seconds of CI.
      it.each(version === '2.14' ? ['0.0.0.0', '::'] : ['0.0.0.0'])(
        '%s: torchrun alone completes a Gloo all-reduce, and so does it through nccl-run, on lo (local)',
        async (master) => {
          const job = [
            '--nnodes=1',
            '--nproc_per_node=2',
            `--master_addr=${master}`,
            '--master_port=29580',
          ];
          const alone = await torchrun([...job, PORT_REPORT, '--allreduce']);
          expect(alone.exitCode, String(alone.stderr)).toBe(0);
          expect(reports(alone.stdout)).toEqual(expect.arrayContaining(['0 sum=2', '1 sum=2']));

          const through = await throughNcclRun(
            [...job, PORT_REPORT, '--allreduce'],
            ['--log-format', 'json'],
          );
          expect(through.exitCode, String(through.stderr)).toBe(0);
          expect(reports(through.stdout)).toEqual(expect.arrayContaining(['0 sum=2', '1 sum=2']));
          expect(String(through.stderr)).toMatch(
            /"msg":"using lo 127\.0\.0\.1 \(local: single-node job/,
          );
        },
      );
    },
  );
}
