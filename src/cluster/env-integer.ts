import { badValue } from '../errors.js';

/**
 * A whole number from a cluster variable, or null when the variable is unset
 * or empty. Anything else is a configuration error naming the variable.
 */
export function readEnvInteger(
  env: NodeJS.ProcessEnv,
  name: string,
  min: number,
  max: number,
): number | null {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return null;
  const value = /^\s*\d+\s*$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw badValue({ name, from: 'env' }, raw, `expected a whole number ${min}-${max}`);
  }
  return value;
}

/** The first of several variables that is set and not empty, with its name. */
export function firstSet(
  env: NodeJS.ProcessEnv,
  names: readonly string[],
): { name: string; value: string } | null {
  for (const name of names) {
    const value = env[name];
    if (value !== undefined && value.trim() !== '') return { name, value };
  }
  return null;
}
