/**
 * What NCCL puts in /dev/shm on one node, from NCCL's own source
 * (NVIDIA/nccl; v2.22.3-1, v2.28.x and v2.29.x line by line, the tags
 * between for the one size that moves, whose value per release is in
 * releases.ts, `shm`):
 *
 * 1. Every segment is ncclShmOpen's (src/misc/shmutils.cc, the same from
 *    v2.18.1-1 to v2.30.7-1): a file /dev/shm/nccl-XXXXXX fallocate()d to the
 *    size asked plus an int (the attach refcount), so tmpfs takes that size,
 *    rounded up to its pages, at once. The file is unlinked when the peer has
 *    attached; its pages stay until the communicator is destroyed. Users'
 *    "failed to extend /dev/shm/nccl-XXXXXX to 9637892 bytes" is 9637888 + 4.
 * 2. The proxy's ops pool (src/proxy.cc proxyProgressInit, reached from
 *    proxyConnInit): one segment of sizeof(struct ncclProxyOpsPool) for each
 *    rank whose proxy thread serves a connection that needs progress: every
 *    network connection (src/transport/net.cc), and SHM or P2P connections
 *    only under NCCL_SHM_USE_CUDA_MEMCPY / NCCL_P2P_USE_CUDA_MEMCPY. A job of
 *    several nodes gives at least one rank of each node a network
 *    connection, and usually every rank. NCCL_SHM_DISABLE does not touch it.
 * 3. The SHM transport's buffers (src/transport/shm.cc shmRecvSetup and
 *    shmSendSetup), between two local ranks NCCL joins by SHM: never under
 *    NCCL_SHM_DISABLE=1, always under NCCL_P2P_DISABLE=1, otherwise where
 *    their GPUs have no P2P path (PCIe across CPU sockets, some VMs and
 *    containers), which files do not tell. Each connection's receiver holds
 *    sizeof(struct ncclRecvMem) (4096: a union padded to MEM_ALIGN,
 *    src/include/comm.h) plus the three protocols' buffers
 *    (nccl-buffsizes.ts: 524288 + 4915200 + 4194304 by default), its
 *    sender sizeof(struct ncclSendMem) (4096); NCCL_SHM_LOCALITY=1 swaps the
 *    sides, not the sum. From v2.23.4-1 they go through
 *    ncclShmAllocateShareableBuffer, which takes cuMem host memory instead
 *    when NCCL_CUMEM_HOST_ENABLE is on (v2.23: only when set; v2.24 on: by
 *    default with a CUDA 12.6 driver, src/misc/cudawrap.cc) and, from
 *    v2.27.3-1, a trial allocation works: Docker without SYS_NICE makes it
 *    fail, and NCCL falls back to /dev/shm (pytorch/ci-infra#490's log:
 *    transport/shm.cc:551 at 2.29, 9637892 bytes). How many connections: per channel each rank
 *    receives from its ring predecessor and from its tree neighbours, two
 *    local peers at most (one with two local ranks); channels: 2 where NCCL
 *    falls to SHM (users' logs: "2 coll channels"), NCCL_MIN_NCHANNELS and
 *    NCCL_MAX_NCHANNELS move it. Send/recv between every pair of local ranks
 *    (all-to-all) adds one connection per peer and channel on top.
 * 4. Nothing else worth counting: the P2P transport's buffers are GPU memory
 *    shared by cudaIpc or cuMem handles (src/transport/p2p.cc at v2.22.3-1,
 *    v2.28.9-1, v2.29.7-1; p2pSendProxySetup), with an 8 KiB segment per
 *    connection only under NCCL_P2P_USE_CUDA_MEMCPY; NVLS keeps a few KiB
 *    (src/transport/nvls.cc); a network connection's host buffers go to
 *    /dev/shm only where its proxy is another process (PXN, net.cc
 *    netCreateShm), which this estimate leaves out.
 *
 * Confirmed against users' numbers: 9637892 (2.22 and 2.29 SHM segments,
 * NVIDIA/nccl#1518, pytorch/ci-infra#490), 10486116 (the 2.23 pool,
 * deepseek-ai/DeepEP#53), 33030532 (the 2.26/2.27 pool, ai-dynamo/dynamo#1408),
 * 5967876 (a 2.18 SHM segment with NCCL_BUFFSIZE=524288, NVIDIA/nccl-tests#166).
 */
import { ncclBehaviours } from './behaviour.js';
import { ncclBuffSizes, sumBuffSizes } from './nccl-buffsizes.js';
import { ncclIntParam } from './nccl-param.js';
import type { NcclShm } from './releases.js';

/** src/include/comm.h: sizeof(struct ncclSendMem) and sizeof(struct ncclRecvMem), both MEM_ALIGN. */
const CONNECTION_HEADER_BYTES = 4096;
/** ncclShmOpen's refcount after the segment. */
const REFCOUNT_BYTES = 4;
/** Channels where NCCL runs its rings over SHM (PCIe without P2P), before NCCL_MIN/MAX_NCHANNELS. */
const SHM_CHANNELS = 2;

/** What the NCCL the job loads puts in /dev/shm: its version's, or every one nccl-run knows when the version is unknown. */
export function ncclShmRecords(version: string | null): readonly NcclShm[] {
  return ncclBehaviours(version).map((behaviour) => behaviour.shm);
}

export interface ShmJob {
  /** Ranks on this node. */
  localRanks: number;
  /** Whether the job may span nodes (its largest node count is above 1): then ranks talk to the network. */
  multiNode: boolean;
  /** NCCL's environment (NCCL_BUFFSIZE, NCCL_SHM_DISABLE, ...). */
  env: Readonly<Record<string, string | undefined>>;
  /** tmpfs's allocation unit (statfs f_bsize), to round each segment up to. */
  pageBytes: number;
}

/**
 * The bytes ncclShmOpen fallocate()s for each of NCCL's segments (the size
 * asked plus the refcount int): what users' "failed to extend
 * /dev/shm/nccl-XXXXXX to N bytes" names.
 */
export interface NcclSegments {
  proxyOpsPool: number;
  /** An SHM connection's receiving side, with the protocols' buffers (NCCL_SHM_LOCALITY=2, the default). */
  shmReceiver: number;
  /** Its sending side. */
  shmSender: number;
}

export function ncclSegments(
  record: NcclShm,
  env: Readonly<Record<string, string | undefined>>,
): NcclSegments {
  return {
    proxyOpsPool: record.proxyOpsPoolBytes + REFCOUNT_BYTES,
    shmReceiver: CONNECTION_HEADER_BYTES + sumBuffSizes(ncclBuffSizes(env)) + REFCOUNT_BYTES,
    shmSender: CONNECTION_HEADER_BYTES + REFCOUNT_BYTES,
  };
}

export interface ShmNeed {
  /** Bytes NCCL may place in /dev/shm here for one communicator: every local rank's pool, and SHM buffers between every local pair. */
  bytes: number;
  /** Each term, as the evidence names it. */
  terms: string[];
}

/**
 * The /dev/shm that NCCL may need on this node for one communicator (each
 * further process group the job makes needs as much again), for the largest
 * of the versions it may load. An estimate, never a certainty: whether SHM
 * carries the local traffic, and whether a rank talks to the network (not
 * across multi-node NVLink), is NCCL's topology search's to decide.
 */
export function ncclShmNeed(job: ShmJob, records: readonly NcclShm[]): ShmNeed {
  const pages = (bytes: number) => Math.ceil(bytes / job.pageBytes) * job.pageBytes;
  const segments = records.map((record) => ncclSegments(record, job.env));
  const terms: string[] = [];
  let bytes = 0;

  const memcpyProxy =
    ncclIntParam(job.env.NCCL_SHM_USE_CUDA_MEMCPY, 0) !== 0 ||
    ncclIntParam(job.env.NCCL_P2P_USE_CUDA_MEMCPY, 0) !== 0;
  if (job.multiNode || memcpyProxy) {
    const pool = Math.max(...segments.map((segment) => pages(segment.proxyOpsPool)));
    bytes += job.localRanks * pool;
    terms.push(
      `the proxy's ops pool, ${mib(pool)} per rank × ${job.localRanks} (src/proxy.cc proxyProgressInit)`,
    );
  }

  if (job.localRanks >= 2 && ncclIntParam(job.env.NCCL_SHM_DISABLE, 0) !== 1) {
    const connection = Math.max(
      ...segments.map((segment) => pages(segment.shmReceiver) + pages(segment.shmSender)),
    );
    const peers = job.localRanks === 2 ? 1 : 2;
    const channels = shmChannels(job.env);
    bytes += job.localRanks * peers * channels * connection;
    const where =
      ncclIntParam(job.env.NCCL_P2P_DISABLE, 0) !== 0
        ? 'NCCL_P2P_DISABLE leaves local GPUs to SHM'
        : 'where local GPUs have no P2P path';
    const cuMem = records.every((record) => shmBuffersInDevShm(record, job.env))
      ? ''
      : ', unless NCCL holds them in cuMem host memory: NCCL_CUMEM_HOST_ENABLE, the default from 2.24 with a CUDA 12.6 driver where the container allows it';
    terms.push(
      `SHM transport buffers ${where}, ${mib(connection)} per connection × ${peers} peer${peers === 1 ? '' : 's'} × ${channels} channels × ${job.localRanks} ranks (src/transport/shm.cc${cuMem})`,
    );
  }
  return { bytes, terms };
}

function shmChannels(env: Readonly<Record<string, string | undefined>>): number {
  const min = ncclIntParam(env.NCCL_MIN_NCHANNELS, 0);
  const max = ncclIntParam(env.NCCL_MAX_NCHANNELS, Number.MAX_SAFE_INTEGER);
  return Math.max(1, Math.min(Math.max(SHM_CHANNELS, min), max));
}

/** Whether this version certainly puts the SHM transport's buffers in /dev/shm (cuMem host memory off). */
function shmBuffersInDevShm(
  record: NcclShm,
  env: Readonly<Record<string, string | undefined>>,
): boolean {
  if (record.cuMemHost === 'never') return true;
  if (ncclIntParam(env.NCCL_CUMEM_ENABLE, -2) === 0) return true;
  const host = ncclIntParam(env.NCCL_CUMEM_HOST_ENABLE, -1);
  return record.cuMemHost === 'when-set' ? host <= 0 : host === 0;
}

/** 64 MiB, 9.2 MiB: the unit Docker's --shm-size and the kernel's tmpfs sizes speak. */
export function mib(bytes: number): string {
  const value = bytes / 2 ** 20;
  if (value >= 1024) return `${Number((value / 1024).toFixed(1))} GiB`;
  return `${Number(value.toFixed(value >= 10 ? 0 : 1))} MiB`;
}
