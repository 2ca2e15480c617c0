/**
 * What scripts/nccl-params.js reads as an NCCL release's parameter names,
 * on source written in the forms NVIDIA/nccl uses (src/include/param.h
 * NCCL_PARAM; v2.30.3-1 src/include/param/param.h DEFINE_NCCL_PARAM;
 * src/misc/param.cc ncclGetEnv; src/graph/paths.cc ncclGetLevel;
 * src/graph/tuning.cc getNthreads; src/debug.cc getEnvFunc), and how it
 * turns releases into records.
 */
import { describe, expect, it } from 'vitest';
import { namesRead, parameterRecords } from '../../../scripts/nccl-params.js';

describe('namesRead', () => {
  it('reads NCCL_PARAM, DEFINE_NCCL_PARAM and the names given to the environment readers', () => {
    const source = `
NCCL_PARAM(SocketNthreads, "SOCKET_NTHREADS", -2);
NCCL_PARAM(
  IbTimeout, "IB_TIMEOUT", 20);
DEFINE_NCCL_PARAM(ncclParamDebugFile, const char*, NCCL_DEBUG_FILE, nullptr,
                  NCCL_PARAM_FLAG_NONE, parser, "file");
const char* env = ncclGetEnv("NCCL_SOCKET_IFNAME");
char* str = getenv("NCCL_COMM_ID");
const char* level = std::getenv("NCCL_CONF_FILE");
NCCLCHECK(ncclGetLevel(&level, "NCCL_P2P_DISABLE", "NCCL_P2P_LEVEL"));
x = getNthreads("NCCL_NTHREADS", ncclParamNthreads(), 2 * WARP_SIZE,
                NCCL_SIMPLE_MAX_NTHREADS);
const char* sub = getEnvFunc(
    "NCCL_DEBUG_SUBSYS");
`;
    expect([...namesRead(source)].sort()).toEqual([
      'NCCL_COMM_ID',
      'NCCL_CONF_FILE',
      'NCCL_DEBUG_FILE',
      'NCCL_DEBUG_SUBSYS',
      'NCCL_IB_TIMEOUT',
      'NCCL_NTHREADS',
      'NCCL_P2P_DISABLE',
      'NCCL_P2P_LEVEL',
      'NCCL_SOCKET_IFNAME',
      'NCCL_SOCKET_NTHREADS',
    ]);
  });

  it('leaves out names in messages, macros and other calls', () => {
    const source = `
#define NCCL_SOCKET_MAGIC 0x564ab9f2fc4b9d6cULL
WARN("Use NCCL_GIN_NCONTEXTS to increase the limit");
WARN("requested %s", "NCCL_COMM_PROPERTIES_INITIALIZER");
setenv("NCCL_OTHER", "TRUE", 1);
ncclLoadParam("NCCL_" env, deftVal, uninitialized, &cache);
`;
    expect([...namesRead(source)]).toEqual([]);
  });
});

describe('parameterRecords', () => {
  it('keeps the first release whole, then only the releases whose names changed', () => {
    expect(
      parameterRecords([
        { tag: 'v2.18.1-1', names: ['NCCL_A', 'NCCL_B'] },
        { tag: 'v2.18.3-1', names: ['NCCL_A', 'NCCL_B'] },
        { tag: 'v2.19.1-1', names: ['NCCL_A', 'NCCL_C'] },
      ]),
    ).toEqual([
      { version: '2.18.1', tag: 'v2.18.1-1', added: ['NCCL_A', 'NCCL_B'], removed: [] },
      { version: '2.19.1', tag: 'v2.19.1-1', added: ['NCCL_C'], removed: ['NCCL_B'] },
    ]);
  });
});
