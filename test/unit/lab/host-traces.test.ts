import { describe, expect, it } from 'vitest';
import { tracesLeft } from '../../lab/host-traces.js';

describe('tracesLeft', () => {
  it('names a watched path that appeared during the run', () => {
    expect(tracesLeft(new Set(), (path) => path === '/dev/infiniband')).toEqual([
      '/dev/infiniband',
    ]);
  });

  it('leaves alone one that was there before (a real RDMA host)', () => {
    expect(tracesLeft(new Set(['/dev/infiniband']), () => true)).toEqual([]);
  });

  it('finds nothing where nothing appeared', () => {
    expect(tracesLeft(new Set(), () => false)).toEqual([]);
  });
});
