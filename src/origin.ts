/**
 * Where a setting came from, from where it was read to the message that
 * names it (STYLE.md: a fact travels as data). SPEC "Exit status": a bad
 * value given on the command line (nccl-run's flags, torchrun's arguments)
 * is a usage error (64); one from anywhere else (a variable, the env file,
 * NCCL's files, the scheduler) a configuration error (78), fixed where it
 * was set (errors.ts settingError).
 */

/** Where a setting came from. */
export interface Origin {
  /** As messages name it: --iface, NCCL_RUN_IFACE, NCCL_RUN_IFACE in ./nccl-run.env, --nnodes, slurm. */
  name: string;
  /**
   * pet: a PET_* variable, which torchrun reads itself; env: any other
   * variable; nccl-conf: one of NCCL's own files ($NCCL_CONF_FILE,
   * ~/.nccl.conf, /etc/nccl.conf).
   */
  from: 'flag' | 'argv' | 'env' | 'pet' | 'env-file' | 'nccl-conf' | 'cluster' | 'default';
  /** The file it was read from, for the env file and NCCL's files. */
  file?: string;
}

/** The origin as the start of a message: torchrun's arguments and the scheduler say whose. */
export function originText(origin: Origin): string {
  if (origin.from === 'argv') return `torchrun argument ${origin.name}`;
  if (origin.from === 'cluster') return `${origin.name} (from the cluster)`;
  return origin.name;
}

/** Where a user's own value was set, as "(set in ...)" names it: the environment, the env file, NCCL's file. */
export function whereSet(origin: Origin): string {
  if (origin.from === 'env' || origin.from === 'pet') return 'the environment';
  if (origin.from === 'env-file') return 'the env file';
  if (origin.from === 'nccl-conf') return origin.file ?? "NCCL's configuration file";
  return originText(origin);
}

/** One value and where it came from: the job's shape is read as these. */
export interface Setting {
  value: string;
  origin: Origin;
}
