import { describe, expect, it } from 'vitest';
import { UnresolvableMasterError } from '../../../src/errors.js';
import { resolveMaster } from '../../../src/host/resolve-name.js';

// Names go through getaddrinfo and are tested against a namespace's own
// /etc/hosts in test/integration/resolve-master.test.ts; literals never reach it.
describe('resolveMaster with an IP literal', () => {
  it.each([
    ['198.18.0.1', ['198.18.0.1']],
    ['127.0.0.1', ['127.0.0.1']],
    ['2001:db8::1', ['2001:db8::1']],
    ['[2001:db8::1]', ['2001:db8::1']],
    ['::1', ['::1']],
    ['fe80::1%eth0', ['fe80::1%eth0']],
  ])('%s → %j', async (host, addresses) => {
    await expect(resolveMaster(host)).resolves.toEqual(addresses);
  });

  it('rejects an empty master with exit 68 and one line', async () => {
    const error = await resolveMaster('').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnresolvableMasterError);
    expect((error as UnresolvableMasterError).exitCode).toBe(68);
    expect((error as Error).message).toBe(
      'the master address is empty; set --master-addr or MASTER_ADDR',
    );
  });
});
