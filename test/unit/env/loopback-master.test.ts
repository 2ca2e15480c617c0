import { describe, expect, it } from 'vitest';
import { loopbackMasterWarning } from '../../../src/env/loopback-master.js';
import { endpointOrigins, makeJob, originNamed } from '../../fixtures/job-shape.js';

const twoNodes = { nnodes: { min: 2, max: 2, origin: originNamed('--nnodes') } };
const master = (host: string) => ({
  master: { host, port: 29500, ...endpointOrigins('--master-addr') },
});

describe('loopbackMasterWarning (SPEC "Warnings")', () => {
  it('warns when a multi-node master name resolves to loopback on this node', () => {
    const warning = loopbackMasterWarning(makeJob({ ...twoNodes, ...master('node01') }), [
      '127.0.1.1',
    ]);
    expect(warning).toBe(
      "the master node01 (127.0.1.1 here) is a loopback address in a job of up to 2 nodes: only processes on this host can reach it; give the master's network address, or fix /etc/hosts if it maps the master's name to loopback (Debian's 127.0.1.1 line)",
    );
  });

  it('names a loopback literal once', () => {
    const warning = loopbackMasterWarning(makeJob({ ...twoNodes, ...master('::1') }), ['::1']);
    expect(warning).toMatch(/^the master ::1 is a loopback address in a job of up to 2 nodes/);
  });

  it.each([
    ['a one-node job', makeJob(master('localhost')), ['127.0.0.1']],
    ['--standalone', makeJob({ ...twoNodes, master: null, standalone: true }), []],
    ['a master on the network', makeJob({ ...twoNodes, ...master('node01') }), ['198.18.0.1']],
  ])('says nothing for %s', (_case, job, addresses) => {
    expect(loopbackMasterWarning(job, addresses)).toBeNull();
  });
});
