/**
 * The real torchrun parsers as oracles (test/fixtures/torchrun-parser.py):
 * one Python process per torch answers for a whole list of command lines,
 * with the interpreter named on that torchrun's `#!` line.
 *
 * Each torch comes from the host's /usr/bin/torchrun when that is the
 * version (Debian 12: 1.13, Debian 13: 2.6), else from the lab's Debian root
 * of its release (debian-root.ts labRoot, built once per machine, needs root).
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { inRoot, labRoot, type Suite } from './debian-root.js';
import { HOST_TORCHRUN, torchrunInterpreter, torchrunVersion } from './host-torchrun.js';

const PARSER_PY = fileURLToPath(new URL('../fixtures/torchrun-parser.py', import.meta.url));

export type TorchVersion = '1.13' | '2.6' | '2.14';
export const TORCH_VERSIONS: readonly TorchVersion[] = ['1.13', '2.6', '2.14'];
const SUITE: Record<TorchVersion, Suite> = { '1.13': 'bookworm', '2.6': 'trixie', '2.14': 'sid' };

export interface ParserReport<Answer> {
  torch: string;
  python: string;
  results: Answer[];
}

/** The root holding `version`'s torchrun: the host when it is that version, else the lab root. */
export function torchRoot(version: TorchVersion): { path: string } | { error: string } {
  if (existsSync(HOST_TORCHRUN) && torchrunVersion() === version) return { path: '/' };
  const root = labRoot(SUITE[version]);
  if ('error' in root) {
    const host = existsSync(HOST_TORCHRUN)
      ? `the host's ${HOST_TORCHRUN} is torch ${torchrunVersion() ?? '(unknown)'}`
      : `there is no ${HOST_TORCHRUN} (apt-get install python3-torch)`;
    return { error: `${host}, and ${root.error}` };
  }
  return root;
}

/**
 * torchrun-parser.py's answers, one per request, from the torch in `root`;
 * `flags` picks its mode (none: argparse alone; `--derive`: what run.py makes
 * of each line).
 */
export async function askTorchParser<Answer>(
  root: string,
  flags: readonly string[],
  requests: readonly unknown[],
): Promise<ParserReport<Answer>> {
  const torchrun = root === '/' ? HOST_TORCHRUN : `${root}${HOST_TORCHRUN}`;
  const python = torchrunInterpreter(torchrun);
  if (python === null) throw new Error(`${torchrun} has no #! line naming its Python`);
  const [command, ...args] =
    root === '/'
      ? [python, PARSER_PY, ...flags]
      : inRoot(root, 'torchrun-parser', python, [PARSER_PY, ...flags]);
  const run = await execa(command as string, args, {
    input: JSON.stringify(requests),
    // No PET_* variables (torchrun's environment defaults) or Python settings from here.
    env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', LANG: 'C.UTF-8' },
    extendEnv: false,
    timeout: 120_000,
  });
  const report = JSON.parse(run.stdout) as ParserReport<Answer>;
  if (report.results.length !== requests.length) {
    throw new Error(
      `torch ${report.torch} answered ${report.results.length} of ${requests.length}`,
    );
  }
  return report;
}
