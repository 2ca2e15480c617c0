/** The value of a read that may fail (a missing file, an unreadable attribute), or undefined. */
export function attempt<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}
