/**
 * --nccl-log's variables and warnings (src/env/nccl-log.ts), by NCCL's own
 * reading of NCCL_DEBUG_SUBSYS (debug.cc at v2.22.3-1 and v2.29.7-1: a comma
 * list, `^` inverting it, ALL, any case).
 */
import { describe, expect, it } from 'vitest';
import { ncclLogFile, ncclLogWarnings, subsystemShown } from '../../../src/env/nccl-log.js';

const SET = {
  NCCL_DEBUG: 'INFO',
  NCCL_DEBUG_SUBSYS: 'INIT,BOOTSTRAP,NET,ENV',
  NCCL_DEBUG_FILE: '/logs/%h.%p.log',
};

describe('ncclLogFile', () => {
  it('one file per process: debug.cc expands %h and %p', () => {
    expect(ncclLogFile('/shared/job7/nccl/')).toBe('/shared/job7/nccl/%h.%p.log');
    expect(ncclLogFile('/')).toBe('/%h.%p.log');
  });
});

describe('subsystemShown', () => {
  it.each([
    ['INIT,NET', 'BOOTSTRAP', false],
    ['init,bootstrap', 'BOOTSTRAP', true],
    ['ALL', 'BOOTSTRAP', true],
    ['^COLL,P2P', 'INIT', true],
    ['^BOOTSTRAP', 'BOOTSTRAP', false],
  ])('%s shows %s: %s', (list, subsystem, shown) => {
    expect(subsystemShown(list, subsystem)).toBe(shown);
  });
});

describe('ncclLogWarnings', () => {
  it("nothing without --nccl-log, nothing when nccl-run's own values stand", () => {
    expect(ncclLogWarnings(null, SET, {})).toEqual([]);
    expect(ncclLogWarnings('/logs', SET, {})).toEqual([]);
  });

  it("the user's WARN level, kept: audit would have no INFO line", () => {
    expect(ncclLogWarnings('/logs', SET, { NCCL_DEBUG: 'WARN' })).toEqual([
      'NCCL_DEBUG=WARN (yours, kept) hides what `nccl-run audit` reads under --nccl-log: NCCL logs its interfaces, devices and network only at INFO; --force sets INFO',
    ]);
    expect(ncclLogWarnings('/logs', SET, { NCCL_DEBUG: 'trace' })).toEqual([]);
  });

  it("the user's INIT,NET (2.22's lines), kept: from 2.23 the bootstrap line is BOOTSTRAP's", () => {
    expect(ncclLogWarnings('/logs', SET, { NCCL_DEBUG_SUBSYS: 'INIT,NET' })).toEqual([
      'NCCL_DEBUG_SUBSYS=INIT,NET (yours, kept) leaves out BOOTSTRAP, so `nccl-run audit` will not see the bootstrap interface, which NCCL 2.23 and later log under BOOTSTRAP; --force sets INIT,BOOTSTRAP,NET,ENV',
    ]);
  });

  it('--nccl-debug-subsys COLL with --nccl-log: INIT and BOOTSTRAP both missing, said once', () => {
    const [warning, ...rest] = ncclLogWarnings('/logs', { ...SET, NCCL_DEBUG_SUBSYS: 'COLL' }, {});
    expect(rest).toEqual([]);
    expect(warning).toMatch(
      /^NCCL_DEBUG_SUBSYS=COLL leaves out INIT and BOOTSTRAP, so .*`Using network`.*, nor the bootstrap interface/,
    );
  });
});
