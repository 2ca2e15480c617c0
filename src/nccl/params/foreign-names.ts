/**
 * NCCL_* names that are not NCCL's to read, so never judged by its records
 * (SPEC "Outputs", settings lint): the net, tuner and profiler plugins',
 * the test and build tools', the images', torch's, and nccl-run's own. Each
 * entry names whose it is and where that was read.
 */

interface ForeignName {
  /** A whole name, or a prefix ending in `_`. */
  match: string;
  owner: string;
}

export const FOREIGN_NAMES: readonly ForeignName[] = [
  { match: 'NCCL_RUN_', owner: 'nccl-run' },
  // aws/aws-ofi-nccl (the EFA net plugin).
  { match: 'NCCL_OFI_', owner: 'the aws-ofi-nccl net plugin' },
  // Google's GPUDirect-TCPX and TCPXO (FasTrak) net plugins.
  { match: 'NCCL_GPUDIRECTTCPX_', owner: 'the GPUDirect-TCPX net plugin' },
  { match: 'NCCL_FASTRAK_', owner: 'the GPUDirect-TCPXO (FasTrak) net plugin' },
  // Mellanox/nccl-rdma-sharp-plugins (getenv("NCCL_SHARP_DISABLE")).
  { match: 'NCCL_SHARP_', owner: 'the SHARP CollNet plugin' },
  // NVIDIA/nccl's plugin examples, read at v2.30.7-1: plugins/tuner
  // (NCCL_TUNER_CONFIG_FILE), plugins/profiler (NCCL_PROFILE_*,
  // NCCL_PROFILER_CE_*, NCCL_INSPECTOR_*). NCCL's own NCCL_TUNER_PLUGIN and
  // NCCL_PROFILER_PLUGIN are in its records, and judged there first.
  { match: 'NCCL_TUNER_', owner: 'a tuner plugin' },
  { match: 'NCCL_PROFILE_', owner: 'a profiler plugin' },
  { match: 'NCCL_PROFILER_', owner: 'a profiler plugin' },
  { match: 'NCCL_INSPECTOR_', owner: "NCCL's inspector profiler plugin" },
  // NVIDIA/nccl-tests src/common.cu (NCCL_TESTS_SPLIT_MASK, NCCL_TESTS_DEVICE, ...).
  { match: 'NCCL_TESTS_', owner: 'nccl-tests' },
  // NVIDIA's CUDA images set NCCL_VERSION; pytorch's cmake/Modules/FindNCCL.cmake
  // reads it with NCCL_ROOT, NCCL_ROOT_DIR, NCCL_INCLUDE_DIR and NCCL_LIB_DIR;
  // nccl-tests' Makefile takes NCCL_HOME; CMake's find_package(NCCL) takes NCCL_DIR.
  { match: 'NCCL_VERSION', owner: "the image (NVIDIA's images name their NCCL with it)" },
  { match: 'NCCL_ROOT', owner: 'builds that look for NCCL' },
  { match: 'NCCL_ROOT_DIR', owner: 'builds that look for NCCL' },
  { match: 'NCCL_INCLUDE_DIR', owner: 'builds that look for NCCL' },
  { match: 'NCCL_LIB_DIR', owner: 'builds that look for NCCL' },
  { match: 'NCCL_HOME', owner: 'builds that look for NCCL' },
  { match: 'NCCL_DIR', owner: 'builds that look for NCCL' },
  // pytorch torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp: the older
  // names of its TORCH_NCCL_* settings, still read as fallbacks.
  { match: 'NCCL_BLOCKING_WAIT', owner: 'torch' },
  { match: 'NCCL_ASYNC_ERROR_HANDLING', owner: 'torch' },
  { match: 'NCCL_DESYNC_DEBUG', owner: 'torch' },
  { match: 'NCCL_ENABLE_TIMING', owner: 'torch' },
  { match: 'NCCL_USE_TENSOR_REGISTER_ALLOCATOR_HOOK', owner: 'torch' },
];

/** Whose name this is, where it is not NCCL's; null where NCCL's records judge it. */
export function foreignOwner(name: string): string | null {
  const entry = FOREIGN_NAMES.find(({ match }) =>
    match.endsWith('_') ? name.startsWith(match) : name === match,
  );
  return entry?.owner ?? null;
}
