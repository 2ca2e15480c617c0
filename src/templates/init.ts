/**
 * `nccl-run init TEMPLATE [--out PATH] [--force]` (SPEC "Command line").
 * Without --out the template goes to stdout. An existing file is replaced only
 * with --force; the check and the write are one open (O_EXCL), so nothing
 * written in between is clobbered. A refusal is a usage error (exit 64), not a
 * configuration error: what fixes it is on the command line (--force, another
 * --out), and nothing in the environment or an env file is wrong.
 */
import { writeFileSync } from 'node:fs';
import { UsageError } from '../errors.js';
import { TEMPLATE_NAMES, type TemplateName } from './catalog.js';
import { renderTemplate } from './render-template.js';

export { renderTemplate };

export async function runInit(
  args: { template: string | undefined; out: string | null; force: boolean },
  stdout: NodeJS.WritableStream,
): Promise<number> {
  const valid = TEMPLATE_NAMES.join(', ');
  if (args.template === undefined) throw new UsageError(`init: which template? valid: ${valid}`);
  if (!(TEMPLATE_NAMES as readonly string[]).includes(args.template)) {
    throw new UsageError(`init: unknown template '${args.template}'; valid: ${valid}`);
  }
  const text = renderTemplate(args.template as TemplateName);
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
    throw new UsageError(`--out ${args.out}: cannot write it (${code ?? String(error)})`);
  }
  process.stderr.write(`nccl-run: wrote the ${args.template} template to ${args.out}\n`);
  return 0;
}
