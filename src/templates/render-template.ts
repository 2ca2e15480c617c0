import { UsageError } from '../errors.js';
import { TEMPLATE_NAMES, TEMPLATES, type TemplateName } from './catalog.js';
import { readTemplateFile } from './template-files.js';

const PLACEHOLDER = /\{\{([A-Z_]+)\}\}/g;

/** A template with its {{NAME}} placeholders filled in: the values given, else the defaults. */
export function renderTemplate(name: TemplateName, values: Record<string, string> = {}): string {
  const spec = TEMPLATES[name];
  if (spec === undefined) {
    throw new UsageError(`unknown template '${name}'; valid: ${TEMPLATE_NAMES.join(', ')}`);
  }
  for (const [key, value] of Object.entries(values)) {
    const valueSpec = spec.values[key];
    if (valueSpec === undefined) {
      const valid = Object.keys(spec.values);
      throw new UsageError(
        `template ${name} has no value ${key}; valid: ${valid.length > 0 ? valid.join(', ') : 'none'}`,
      );
    }
    if (!valueSpec.accepts(value)) {
      throw new UsageError(
        `template ${name}: bad ${key} '${value}': expected ${valueSpec.expected}`,
      );
    }
  }
  return readTemplateFile(spec.file).replace(PLACEHOLDER, (whole, key: string) => {
    const value = values[key] ?? spec.values[key]?.default;
    if (value === undefined) throw new Error(`${spec.file}: placeholder ${whole} has no value`);
    return value;
  });
}
