/**
 * nccl-tests' bus bandwidth for all-reduce (NVIDIA/nccl-tests
 * src/all_reduce.cu AllReduceGetBw, doc/PERFORMANCE.md): the algorithm
 * bandwidth (bytes / time) times 2(n-1)/n, where n is the number of ranks,
 * so that the figure compares with the link's own speed whatever n is.
 */

/** Bytes per second; null where nothing was timed. */
export function busBandwidth(bytes: number, seconds: number, ranks: number): number | null {
  if (!(seconds > 0) || ranks < 1) return null;
  const algorithmBandwidth = bytes / seconds;
  return (algorithmBandwidth * 2 * (ranks - 1)) / ranks;
}
