/**
 * The size of each protocol's buffer in every NCCL connection (src/init.cc
 * computeBuffSizes, the same from v2.18.1-1 to v2.30.7-1): NCCL_LL_BUFFSIZE,
 * NCCL_LL128_BUFFSIZE and NCCL_BUFFSIZE when set (NCCL_PARAM, default -2),
 * else DEFAULT_LL_BUFFSIZE (8 lines × 512 threads × 8 steps × 16 bytes),
 * DEFAULT_LL128_BUFFSIZE (120 × 640 threads × 8 steps × 8 bytes) and
 * DEFAULT_BUFFSIZE (4 MiB).
 */
import { ncclIntParam } from './nccl-param.js';

export interface NcclBuffSizes {
  LL: number;
  LL128: number;
  SIMPLE: number;
}

const DEFAULTS: NcclBuffSizes = { LL: 524_288, LL128: 4_915_200, SIMPLE: 4_194_304 };

export function ncclBuffSizes(env: Readonly<Record<string, string | undefined>>): NcclBuffSizes {
  const size = (value: string | undefined, fallback: number) => {
    const set = ncclIntParam(value, -2);
    return set === -2 ? fallback : Math.max(set, 0);
  };
  return {
    LL: size(env.NCCL_LL_BUFFSIZE, DEFAULTS.LL),
    LL128: size(env.NCCL_LL128_BUFFSIZE, DEFAULTS.LL128),
    SIMPLE: size(env.NCCL_BUFFSIZE, DEFAULTS.SIMPLE),
  };
}

/** All three: what one SHM connection's receiver, or one network connection's side without GPUDirect, holds. */
export function sumBuffSizes(sizes: NcclBuffSizes): number {
  return sizes.LL + sizes.LL128 + sizes.SIMPLE;
}
