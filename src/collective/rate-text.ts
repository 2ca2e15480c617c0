/** A rate in bytes per second as people read it: MB/s (10^6 bytes), with Mbit/s beside it (SPEC RATE's units). */
export function rateText(bytesPerSecond: number): string {
  const megabytes = bytesPerSecond / 1e6;
  const megabits = megabytes * 8;
  const digits = (value: number) => (value >= 100 ? value.toFixed(0) : value.toPrecision(3));
  return `${digits(megabytes)} MB/s (${digits(megabits)} Mbit/s)`;
}
