/** Types of scripts/release.js, for the tests of the artifacts. */
export declare const RELEASE_DIR: string;
export declare const PLATFORMS: Record<
  'x64' | 'arm64',
  { binary: string; wheelTag: string; runner: string[] }
>;
export declare function buildProgram(work: string): Promise<string>;
export declare function makeBlob(
  arch: 'x64' | 'arm64',
  program: string,
  work: string,
  cache?: string | null,
): string;
export declare function injectBlob(node: string, blob: string, out: string): Promise<string>;
export declare function release(arches?: readonly string[]): Promise<string[]>;
export declare const WHEEL_MAN_PAGE: string;
