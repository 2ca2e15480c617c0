import { readFileSync } from 'node:fs';

declare const NCCL_RUN_VERSION: string | undefined;

/** The package version: inlined by the one-file bundle, else read from package.json. */
export function packageVersion(): string {
  if (typeof NCCL_RUN_VERSION === 'string') return NCCL_RUN_VERSION;
  const text = readFileSync(new URL('../package.json', import.meta.url), 'utf8');
  return (JSON.parse(text) as { version: string }).version;
}
