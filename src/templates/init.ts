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
import { writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { UsageError } from '../errors.js';
import { parsePortRange, withPortRange } from './port-range.js';
import { shippedFileText, TEMPLATES, type TemplateName } from './shipped-files.js';

const TEMPLATE_NAMES = Object.keys(TEMPLATES) as TemplateName[];

/** A template's text. */
export function templateText(name: TemplateName): string {
  return shippedFileText(TEMPLATES[name]);
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
