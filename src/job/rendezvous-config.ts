/**
 * --rdzv-conf read as torch reads it: `_parse_rendezvous_config` in
 * torch/distributed/elastic/rendezvous/utils.py for the pairs, and
 * `RendezvousParameters.get_as_bool` (rendezvous/api.py) for `is_host`, which
 * the c10d backend uses instead of guessing from the endpoint whether this
 * node hosts the store.
 */
import { pythonStrip } from '../torch/python-builtins.js';

export type ConfigReading =
  | { pairs: Record<string, string>; problem?: undefined }
  | { problem: string };

export function readRendezvousConfig(text: string): ConfigReading {
  // No prototype: a key such as `__proto__` stays a key.
  const pairs: Record<string, string> = Object.create(null);
  const stripped = pythonStrip(text);
  if (stripped === '') return { pairs };
  for (const pair of stripped.split(',')) {
    const equals = pair.indexOf('=');
    const key = pythonStrip(equals === -1 ? pair : pair.slice(0, equals));
    if (key === '') return { problem: `'${pair}' has no key; expected KEY=VALUE,KEY=VALUE,...` };
    const value = equals === -1 ? '' : pythonStrip(pair.slice(equals + 1));
    if (value === '') return { problem: `'${key}' has no value; expected KEY=VALUE,KEY=VALUE,...` };
    pairs[key] = value;
  }
  return { pairs };
}

const TRUE_WORDS = ['1', 'true', 't', 'yes', 'y'];
const FALSE_WORDS = ['0', 'false', 'f', 'no', 'n'];

/** `is_host` as get_as_bool reads it: true, false, null when absent, or a problem. */
export function readIsHost(pairs: Record<string, string>): boolean | null | { problem: string } {
  const value = pairs.is_host;
  if (value === undefined) return null;
  if (TRUE_WORDS.includes(value.toLowerCase())) return true;
  if (FALSE_WORDS.includes(value.toLowerCase())) return false;
  return {
    problem: `is_host=${value} is not a boolean; expected one of ${[...TRUE_WORDS, ...FALSE_WORDS].join(', ')}`,
  };
}
