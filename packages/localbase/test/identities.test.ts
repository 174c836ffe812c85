// GET /user/identities/authorize and DELETE /user/identities/{id}: with manual linking off (the default) both answer
// GoTrue's 404 manual_linking_disabled; with --enable-manual-linking an identity can be unlinked but not the last one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { raw, signedInClient, startTestServer, type Localbase } from './helpers.ts';

let off: Localbase;
let on: Localbase;

beforeAll(async () => {
  off = await startTestServer();
  on = await startTestServer({ enableManualLinking: true });
});

afterAll(async () => {
  await off?.stop();
  await on?.stop();
});

describe('manual linking off', () => {
  it('linkIdentity and unlinkIdentity answer 404 manual_linking_disabled', async () => {
    const { client } = await signedInClient(off);
    const link = await client.auth.linkIdentity({ provider: 'github' });
    expect(link.error?.status).toBe(404);
    expect(link.error?.code).toBe('manual_linking_disabled');
    expect(link.error?.message).toBe('Manual linking is disabled');

    const { data } = await client.auth.getUserIdentities();
    const identity = data!.identities[0]!;
    const unlink = await client.auth.unlinkIdentity(identity);
    expect(unlink.error?.status).toBe(404);
    expect(unlink.error?.code).toBe('manual_linking_disabled');
    expect(unlink.error?.message).toBe('Manual linking is disabled');
  });

  it('both need a signed-in user first', async () => {
    const res = await raw(off, `/auth/v1/user/identities/${randomUUID()}`, { method: 'DELETE' });
    expect(res.status).toBe(401);
  });
});

describe('manual linking on', () => {
  it('linkIdentity names the provider as not enabled (no OAuth provider is on)', async () => {
    const { client } = await signedInClient(on);
    const link = await client.auth.linkIdentity({ provider: 'google' });
    expect(link.error?.status).toBe(400);
    expect(link.error?.code).toBe('validation_failed');
    expect(link.error?.message).toBe('Unsupported provider: provider is not enabled');
  });

  it('unlinks one of two identities, refuses the last and an unknown one', async () => {
    const { client } = await signedInClient(on);
    const me = (await client.auth.getUser()).data.user!;
    // A second identity, as an OAuth link on hosted Supabase would have made it.
    await on.db.query(
      `insert into auth.identities (provider_id, user_id, identity_data, provider, created_at, updated_at)
       values ($1, $2, $3::jsonb, 'github', now(), now())`,
      [`gh-${randomUUID()}`, me.id, JSON.stringify({ sub: 'gh', email: me.email })],
    );
    await on.db.query(
      `update auth.users set raw_app_meta_data = raw_app_meta_data || '{"providers": ["email", "github"]}' where id = $1`,
      [me.id],
    );
    // Written behind the server's back: a write request clears its GET /user read cache.
    await client.auth.updateUser({ data: {} });
    const before = (await client.auth.getUserIdentities()).data!.identities;
    expect(before.map((i) => i.provider).sort()).toEqual(['email', 'github']);

    const unknown = await client.auth.unlinkIdentity({ ...before[0]!, identity_id: randomUUID() });
    expect(unknown.error?.status).toBe(422);
    expect(unknown.error?.code).toBe('identity_not_found');
    expect(unknown.error?.message).toBe("Identity doesn't exist");

    const github = before.find((i) => i.provider === 'github')!;
    const ok = await client.auth.unlinkIdentity(github);
    expect(ok.error).toBeNull();
    const after = (await client.auth.getUser()).data.user!;
    expect(after.identities?.map((i) => i.provider)).toEqual(['email']);
    expect(after.app_metadata.providers).toEqual(['email']);
    expect(after.email).toBe(me.email);

    const last = await client.auth.unlinkIdentity(after.identities![0]!);
    expect(last.error?.status).toBe(422);
    expect(last.error?.code).toBe('single_identity_not_deletable');
    expect(last.error?.message).toBe('User must have at least 1 identity after unlinking');
  });
});
