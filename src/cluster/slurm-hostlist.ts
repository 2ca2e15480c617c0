/** Expands a Slurm hostlist (node[01-04,07],login1) into host names, in Slurm's order. */
export function expandHostlist(_text: string): string[] {
  throw new Error('expandHostlist: not implemented yet');
}
