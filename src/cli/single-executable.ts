/**
 * The entry of the single executable (scripts/release.js): Node's single
 * executable application over the official Node binary named by
 * NCCL_RUN_NODE, whose main script (scripts/sea-loader.cjs) runs this
 * program with its code cache. Its arguments and
 * environment are read as the kernel holds them, so that torchrun gets the
 * caller's bytes (launch/proc-strings.ts), and the launch is an execve
 * (launch/exec-launcher.ts).
 */
import { constants } from 'node:os';
import { EXIT } from '../exit-status.js';
import { cmdlineArguments, environEntries } from '../launch/proc-strings.js';
import { embeddedNode } from '../package-version.js';
import { start } from './entry.js';

const built = embeddedNode();
if (built !== undefined && built !== process.version) {
  // A blob is Node-version specific: its code cache is rejected, and what else differs is unknown.
  process.stderr.write(
    `nccl-run: this single executable was built for Node ${built} but runs on Node ${process.version}: it was put together wrongly; use an artifact of \`npm run release\`\n`,
  );
  process.exit(EXIT.internal);
}
// PID 1 of a PID namespace (a container started without an init, a pod without tini): the kernel
// drops every signal whose disposition is the default, so SIGTERM would not stop nccl-run before
// the exec (SPEC "Launch": 128 + N). Handled, they arrive; execve resets them for torchrun.
if (process.pid === 1) {
  for (const signal of ['SIGHUP', 'SIGINT', 'SIGQUIT', 'SIGTERM'] as const) {
    process.once(signal, () => process.exit(128 + constants.signals[signal]));
  }
}
const env = Object.fromEntries(
  [...environEntries().values()].map(({ name, value }) => [name, value]),
);
// CommonJS, run by scripts/sea-loader.cjs: no top-level await; start() ends the process itself.
void start({ argv: cmdlineArguments(), env });
