import { describe, expect, it } from 'vitest';
import { classifySocketError } from '../../../src/reach/reach-error.js';

describe('classifySocketError', () => {
  it.each([
    ['ECONNREFUSED', 'refused'],
    ['ECONNRESET', 'refused'],
    ['EHOSTUNREACH', 'unreachable'],
    ['ENETUNREACH', 'unreachable'],
    ['ETIMEDOUT', 'timed out'],
    ['EADDRINUSE', 'port in use'],
    ['EADDRNOTAVAIL', 'address not available'],
    ['EMFILE', 'failed'],
  ])('%s → %s', (code, error) => {
    expect(classifySocketError(Object.assign(new Error(code), { code }))).toEqual({
      error,
      detail: code,
    });
  });

  it('keeps the message of an error without an errno', () => {
    expect(classifySocketError(new Error('boom'))).toEqual({ error: 'failed', detail: 'boom' });
  });
});
