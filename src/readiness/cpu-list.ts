/** How many CPUs a kernel CPU list names ("0-3,8-11", Documentation/admin-guide/cputopology.rst); null when it is not one. */
export function cpuListCount(list: string): number | null {
  let count = 0;
  for (const part of list.trim().split(',')) {
    const range = /^(\d+)(?:-(\d+))?$/.exec(part);
    if (range === null) return null;
    const first = Number(range[1]);
    const last = range[2] === undefined ? first : Number(range[2]);
    if (last < first) return null;
    count += last - first + 1;
  }
  return count;
}
