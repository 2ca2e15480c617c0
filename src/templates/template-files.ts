import { readFileSync } from 'node:fs';

/**
 * The one-file bundle carries the template files in this constant (an esbuild
 * define in scripts/bundle.js), since it runs with no package folder around it.
 */
declare const NCCL_RUN_TEMPLATES: Record<string, string> | undefined;

/**
 * A template file by its path from the package root. This module sits two
 * levels below the root both as src/templates/*.ts and dist/templates/*.js.
 */
export function readTemplateFile(file: string): string {
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
