/**
 * `nccl-run init TEMPLATE [--out PATH] [--force] [--port-range LOW-HIGH]`
 * (SPEC "Command line"): writes one of the files in templates/, as it is (or
 * with the port range's sysctl switched on: port-range.ts): a starting point
 * the user edits. Without --out the template goes to stdout. An existing file is
 * replaced only with --force; the check and the write are one open (O_EXCL),
 * so nothing written in between is clobbered. A refusal is a usage error
 * (exit 64), not a configuration error: what fixes it is on the command line
 * (--force, another --out), and nothing in the environment or an env file is wrong.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { UsageError } from '../errors.js';
import { parsePortRange, withPortRange } from './port-range.js';

/** Each template's file, by its path from the package root. */
export const TEMPLATES = {
  slurm: 'templates/slurm.sbatch',
  k8s: 'templates/trainjob.yaml',
  pytorchjob: 'templates/pytorchjob.yaml',
  lws: 'templates/lws.yaml',
  docker: 'Dockerfile.example',
  compose: 'templates/compose.yaml',
  env: 'templates/nccl-run.env',
} as const;
export type TemplateName = keyof typeof TEMPLATES;
const TEMPLATE_NAMES = Object.keys(TEMPLATES) as TemplateName[];

/**
 * The one-file bundle carries the template files in this constant (an esbuild
 * define in scripts/bundle.js), since it runs with no package folder around it.
 */
declare const NCCL_RUN_TEMPLATES: Record<string, string> | undefined;

/**
 * A template's text. This module sits two levels below the package root both
 * as src/templates/init.ts and dist/templates/init.js.
 */
export function templateText(name: TemplateName): string {
  const file = TEMPLATES[name];
  const embedded = typeof NCCL_RUN_TEMPLATES === 'object' ? NCCL_RUN_TEMPLATES : null;
  if (embedded !== null) {
    const text = embedded[file];
    if (text === undefined) throw new Error(`template file ${file} is missing from the bundle`);
    return text;
  }
  const url = new URL(`../../${file}`, import.meta.url);
  try {
    return readFileSync(url, 'utf8');
  } catch (error) {
    // Only a broken install gets here: the package's "files" must ship every template.
    throw new Error(`template file ${file} is missing from this installation (${url.pathname})`, {
      cause: error,
    });
  }
}

export async function runInit(
  args: {
    template: string | undefined;
    out: string | null;
    force: boolean;
    portRange?: string | null;
  },
  stdout: NodeJS.WritableStream,
): Promise<number> {
  const valid = TEMPLATE_NAMES.join(', ');
  if (args.template === undefined) throw new UsageError(`init: which template? valid: ${valid}`);
  if (!(TEMPLATE_NAMES as string[]).includes(args.template)) {
    throw new UsageError(`init: unknown template '${args.template}'; valid: ${valid}`);
  }
  const name = args.template as TemplateName;
  const range = args.portRange == null ? null : parsePortRange(args.portRange);
  const text = range === null ? templateText(name) : withPortRange(name, templateText(name), range);
  if (args.out === null) {
    await new Promise<void>((resolve, reject) =>
      stdout.write(text, (error) => (error ? reject(error) : resolve())),
    );
    return 0;
  }
  try {
    writeFileSync(args.out, text, { flag: args.force ? 'w' : 'wx' });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') {
      throw new UsageError(
        `--out ${args.out}: the file exists; add --force to replace it, or choose another path`,
      );
    }
    if (code === 'ENOENT') {
      throw new UsageError(
        `--out ${args.out}: the folder ${dirname(resolve(args.out))} does not exist; create it first, or choose another path`,
      );
    }
    throw new UsageError(`--out ${args.out}: cannot write it (${code ?? String(error)})`);
  }
  process.stderr.write(`nccl-run: wrote the ${args.template} template to ${args.out}\n`);
  return 0;
}
