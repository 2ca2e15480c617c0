/**
 * One NCCL release's parameter names, as a change to the release before
 * (nccl-params.ts, written by scripts/nccl-params.js): the names its
 * NCCL_PARAM, DEFINE_NCCL_PARAM, getenv and ncclGetEnv read, at its tag.
 */
export interface NcclParameterRecord {
  /** The first release (X.Y.Z, tag vX.Y.Z-1) that reads these names. */
  version: string;
  tag: string;
  /** Names this release reads that the release before did not; the first record's are all its names. */
  added: readonly string[];
  /** Names the release before read that this one does not. */
  removed: readonly string[];
}
