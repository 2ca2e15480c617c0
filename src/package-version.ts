import { readFileSync } from 'node:fs';

declare const NCCL_RUN_VERSION: string | undefined;
declare const NCCL_RUN_NODE: string | undefined;

/** The package version: inlined by the one-file bundle, else read from package.json. */
export function packageVersion(): string {
  if (typeof NCCL_RUN_VERSION === 'string') return NCCL_RUN_VERSION;
  const text = readFileSync(new URL('../package.json', import.meta.url), 'utf8');
  return (JSON.parse(text) as { version: string }).version;
}

/** The Node the single executable embeds (`v24.22.3`), inlined by its build (scripts/release.js); else undefined. */
export function embeddedNode(): string | undefined {
  return typeof NCCL_RUN_NODE === 'string' ? NCCL_RUN_NODE : undefined;
}
