/**
 * The files nccl-run ships beside its program: `nccl-run init`'s templates and
 * the program of `--verify collective`. Read from the package folder, or from
 * the one-file build's embedded copies (scripts/bundle.js TEMPLATE_FILES, the
 * NCCL_RUN_TEMPLATES define), since that build runs with no package around it.
 */
import { readFileSync } from 'node:fs';

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

declare const NCCL_RUN_TEMPLATES: Record<string, string> | undefined;

/**
 * A shipped file's text, by its path from the package root. This module sits
 * two levels below the root both as src/templates/ and dist/templates/.
 */
export function shippedFileText(file: string): string {
  const embedded = typeof NCCL_RUN_TEMPLATES === 'object' ? NCCL_RUN_TEMPLATES : null;
  if (embedded !== null) {
    const text = embedded[file];
    if (text === undefined) throw new Error(`${file} is missing from the bundle`);
    return text;
  }
  const url = new URL(`../../${file}`, import.meta.url);
  try {
    return readFileSync(url, 'utf8');
  } catch (error) {
    // Only a broken install gets here: the package's "files" must ship every one.
    throw new Error(`${file} is missing from this installation (${url.pathname})`, {
      cause: error,
    });
  }
}
