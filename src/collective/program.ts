/**
 * The miniature's Python program (templates/collective.py), shipped like
 * `nccl-run init`'s templates: read beside the package, or from the
 * one-file build's embedded copy (scripts/bundle.js TEMPLATE_FILES, the
 * NCCL_RUN_TEMPLATES define). It is written into the miniature's private
 * folder, so the launcher's interpreter reads it from a path it can see.
 */
import { shippedFileText } from '../templates/shipped-files.js';

export const PROGRAM_FILE = 'templates/collective.py';

export function programText(): string {
  return shippedFileText(PROGRAM_FILE);
}
