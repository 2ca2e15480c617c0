/** Types of scripts/bundle.js, for the tests that build and inspect the bundle. */
export declare const TEMPLATE_FILES: readonly string[];
export declare const BUNDLE_PATH: string;
export declare function bundle(options?: { outfile?: string }): Promise<{
  outfile: string;
  bytes: number;
  metafile: import('esbuild').Metafile;
}>;
/** The built-ins both builds require at their first use, and the esbuild plugin that does it. */
export declare const LAZY_BUILTINS: readonly string[];
export declare const lazyBuiltins: import('esbuild').Plugin;
