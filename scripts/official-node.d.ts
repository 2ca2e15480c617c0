/** Types of scripts/official-node.js, for the tests that run the official Node. */
export declare const NODE_VERSION: string;
export declare const OTHER_NODE_VERSION: string;
export declare const ARCHES: readonly string[];
export declare function officialNode(arch?: string, version?: string): string;
