/**
 * nccl-run's answers for the loader tier (test/e2e/net-plugin-loader.test.ts),
 * computed inside that tier's mount namespace, where the lab root's
 * overlays are visible: argv[2] the root, argv[3] the cases (JSON); prints,
 * per case, the real path (under the root) of the file nccl-run says
 * NCCL's dlopen opens, or "none".
 */
import { readFileSync, realpathSync } from 'node:fs';
import { findNetPlugin } from '../../src/transport/find-net-plugin.js';

interface Case {
  id: string;
  ncclVersion: string;
  env: Record<string, string>;
  cwd: string;
}

const [root = '', casesFile = ''] = process.argv.slice(2);
const cases = JSON.parse(readFileSync(casesFile, 'utf8')) as Case[];
const answers: Record<string, string> = {};
for (const entry of cases) {
  const search = findNetPlugin({
    ncclVersion: entry.ncclVersion,
    env: entry.env,
    ncclEnv: entry.env,
    root,
    cwd: entry.cwd,
  });
  answers[entry.id] =
    search.plugin === null
      ? 'none'
      : realpathSync(`${root}${search.plugin.path}`).slice(root.length);
}
process.stdout.write(JSON.stringify(answers));
