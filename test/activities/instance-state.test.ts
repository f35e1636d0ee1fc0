import { describe, expect, it } from 'vitest';
import { type VastClient, VastHttpError } from '../../activities/vast/client.js';
import { readInstanceState } from '../../activities/vast/instance-state.js';
import type { Instance } from '../../activities/vast/schemas.js';

/**
 * What a watched instance's reading makes of Vast's answers. Only Vast's documented "gone" answers
 * (vast-api.md §1.2 and §1.10: `{"instances": null}`, 404 `no_such_instance` / `not_found`) read as gone;
 * an instance object missing a field, or with a status Vast does not document, is unreadable.
 */
const answering = (answer: () => Promise<Instance | null>) =>
  ({ showInstance: (_id: number) => answer() }) as unknown as VastClient;
const http404 = (code: string) =>
  new VastHttpError('GET', '/api/v0/instances/4242/?owner=me', 404, '{}', code, undefined, 'Instance not found');

describe('readInstanceState', () => {
  it('reads Vast’s documented gone answers as gone', async () => {
    // show-instance-null: {"instances": null}
    expect(
      await readInstanceState(
        answering(async () => null),
        4242,
      ),
    ).toEqual({ status: null, dph: 0 });
    // error-show-404-after-destroy (not_found) and the destroy/change-bid 404 (no_such_instance)
    for (const code of ['not_found', 'no_such_instance']) {
      const r = await readInstanceState(
        answering(() => Promise.reject(http404(code))),
        4242,
      );
      expect(r).toEqual({ status: null, dph: 0 });
    }
  });

  it('reads an instance object without actual_status as unreadable, never gone', async () => {
    const r = await readInstanceState(
      answering(async () => ({ id: 4242, dph_total: 0.5 }) as Instance),
      4242,
    );
    expect(r.unreadable).toMatch(/no actual_status/);
  });

  it('reads a status Vast does not document as unreadable', async () => {
    const r = await readInstanceState(
      answering(async () => ({ id: 4242, actual_status: 'vanished', dph_total: 0.5 }) as Instance),
      4242,
    );
    expect(r.unreadable).toMatch(/undocumented actual_status 'vanished'/);
  });

  it('reads a 404 auth_error as unreadable: a refused key says nothing about the host', async () => {
    const r = await readInstanceState(
      answering(() => Promise.reject(http404('auth_error'))),
      4242,
    );
    expect(r.unreadable).toMatch(/auth_error/);
  });

  it('reads a running instance with its price and market fields', async () => {
    const r = await readInstanceState(
      answering(async () => ({ id: 4242, actual_status: 'running', dph_total: 0.61, is_bid: false }) as Instance),
      4242,
    );
    expect(r).toMatchObject({ status: 'running', dph: 0.61, market: { isBid: false } });
    expect(r.unreadable).toBeUndefined();
  });
});
