/**
 * munged's verdict on a credential, asked over its socket as libmunge
 * does (membership/munge-decode.ts), against a real, private munged: the
 * uid and payload of a fresh one, and a replay.
 */
import { expect, it } from 'vitest';
import { mungeEncode } from '../../../src/membership/munge.js';
import { mungeDecode } from '../../../src/membership/munge-decode.js';
import { privateMunged } from '../../fixtures/private-munged.js';
import { mungeUnavailable } from '../../lab/munged.js';
import { tier } from '../../lab/tier.js';

const UID = process.getuid?.() ?? 0;

tier('mungeDecode through a real munged', mungeUnavailable, () => {
  const munged = privateMunged();

  it('decodes its own credential once, with this uid and the payload; a second decode is a replay', async () => {
    const encoded = await mungeEncode('payload', munged.socket, 60);
    if (!encoded.ok) throw new Error(encoded.reason);
    expect(encoded.credential).toMatch(/^MUNGE:[A-Za-z0-9+/=]+:$/);
    expect(await mungeDecode(encoded.credential, munged.socket)).toEqual({
      ok: true,
      uid: UID,
      payload: 'payload',
    });
    expect(await mungeDecode(encoded.credential, munged.socket)).toEqual({
      ok: false,
      status: 17,
      reason: 'Replayed credential',
    });
  });
});
