/**
 * The miniature's Python program (templates/collective.py), shipped like
 * `nccl-run init`'s templates: read beside the package, or from the
 * one-file build's embedded copy (scripts/bundle.js TEMPLATE_FILES, the
 * NCCL_RUN_TEMPLATES define). It is written into the miniature's private
 * folder, so the launcher's interpreter reads it from a path it can see.
 */
import { readFileSync } from 'node:fs';

export const PROGRAM_FILE = 'templates/collective.py';

declare const NCCL_RUN_TEMPLATES: Record<string, string> | undefined;

export function programText(): string {
  const embedded = typeof NCCL_RUN_TEMPLATES === 'object' ? NCCL_RUN_TEMPLATES : null;
  if (embedded !== null) {
    const text = embedded[PROGRAM_FILE];
    if (text === undefined) throw new Error(`${PROGRAM_FILE} is missing from the bundle`);
    return text;
  }
  // Two levels below the package root, as src/collective/ and dist/collective/.
  const url = new URL(`../../${PROGRAM_FILE}`, import.meta.url);
  try {
    return readFileSync(url, 'utf8');
  } catch (error) {
    throw new Error(`${PROGRAM_FILE} is missing from this installation (${url.pathname})`, {
      cause: error,
    });
  }
}
