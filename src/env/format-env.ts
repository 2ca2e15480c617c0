/** Prints variables as `export KEY='value'` (safe to eval), dotenv KEY=value, or one JSON object. */
export function formatEnv(_variables: Record<string, string>, _format: 'shell' | 'dotenv' | 'json'): string {
  throw new Error('formatEnv: not implemented yet');
}
