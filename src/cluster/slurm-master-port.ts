/**
 * The rendezvous port of a Slurm job that set no MASTER_PORT: the same on
 * every node of the job (all see the same SLURM_JOB_ID), different for jobs
 * that may share a master node.
 *
 *   port = 15000 + 2 * (SLURM_JOB_ID mod 7000)        → 15000, 15002, ... 28998
 *
 * - above 1023, so no privilege is needed;
 * - below 32768, the start of Linux's default ephemeral range
 *   (net.ipv4.ip_local_port_range = 32768 60999), so an outgoing connection
 *   of another process cannot already hold it;
 * - even (it once left port + 1 to the peer probe, which now meets at the
 *   rendezvous port itself), and below 29000: clear of torchrun's defaults
 *   29400 (c10d) and 29500 (static) used by jobs that do not go through
 *   nccl-run, and of Slurm's own 6817-6819;
 * - PyTorch Lightning's Slurm convention (15000 + the last 4 digits of the
 *   job id) is the model, spaced by two so that the ports already in use
 *   stay where they were.
 *
 * Two jobs collide only when their ids are equal modulo 7000 and they run at
 * the same time with the same master node; MASTER_PORT overrides the formula.
 */
const SLURM_PORT_BASE = 15_000;
const SLURM_PORT_SLOTS = 7_000;

export function slurmMasterPort(jobId: number): number {
  return SLURM_PORT_BASE + 2 * (jobId % SLURM_PORT_SLOTS);
}
