/** Types of scripts/nccl-params.js, for its test. */
export declare const FIRST_TAG: string;
export declare function namesRead(source: string): Set<string>;
export declare function releaseTags(gitDir: string): string[];
export declare function releaseNames(gitDir: string, tag: string): string[];
export declare function parameterRecords(
  releases: readonly { tag: string; names: string[] }[],
): { version: string; tag: string; added: string[]; removed: string[] }[];
