// The admin API returns user_metadata as it was given (GoTrue keeps sub/email/email_verified/phone_verified in the
// identity for these paths), and listUsers refuses page / per_page values GoTrue cannot parse.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD, raw, serviceClient, startTestServer, uniqueEmail, type Localbase } from './helpers.ts';

let lb: Localbase;

beforeAll(async () => {
  lb = await startTestServer();
});

afterAll(async () => {
  await lb?.stop();
});

describe('admin user_metadata', () => {
  it('createUser returns user_metadata exactly as supplied; the identity carries sub and email', async () => {
    const meta = { nickname: 'Lin', avatar: { url: 'https://img.example.org/1.png' } };
    const { data, error } = await serviceClient(lb).auth.admin.createUser({
      email: uniqueEmail('meta'),
      password: PASSWORD,
      user_metadata: meta,
    });
    expect(error).toBeNull();
    expect(data.user?.user_metadata).toEqual(meta);
    expect(data.user?.identities?.[0]?.identity_data).toMatchObject({ sub: data.user?.id, email: data.user?.email });
  });

  it('a confirmed createUser adds only email_verified: true (GoTrue confirms through User.Confirm)', async () => {
    const { data } = await serviceClient(lb).auth.admin.createUser({
      email: uniqueEmail('conf'),
      password: PASSWORD,
      email_confirm: true,
      user_metadata: { plan: 'team' },
    });
    expect(data.user?.user_metadata).toEqual({ plan: 'team', email_verified: true });
  });

  it('updateUserById returns exactly the metadata set on a user created without any', async () => {
    const admin = serviceClient(lb).auth.admin;
    const created = await admin.createUser({ email: uniqueEmail('upd'), password: PASSWORD });
    expect(created.data.user?.user_metadata).toEqual({});
    const updated = await admin.updateUserById(created.data.user!.id, { user_metadata: { colour: 'teal' } });
    expect(updated.error).toBeNull();
    expect(updated.data.user?.user_metadata).toEqual({ colour: 'teal' });
  });

  it('updateUserById removes keys given as null, in user_metadata and app_metadata', async () => {
    const admin = serviceClient(lb).auth.admin;
    const created = await admin.createUser({
      email: uniqueEmail('nul'),
      password: PASSWORD,
      user_metadata: { colour: 'teal', size: 'M' },
      app_metadata: { tier: 'gold' },
    });
    const updated = await admin.updateUserById(created.data.user!.id, {
      user_metadata: { colour: null, size: 'L' },
      app_metadata: { tier: null },
    });
    expect(updated.error).toBeNull();
    expect(updated.data.user?.user_metadata).toEqual({ size: 'L' });
    expect(updated.data.user?.app_metadata).not.toHaveProperty('tier');
    expect(updated.data.user?.app_metadata).toMatchObject({ provider: 'email', providers: ['email'] });
  });

  it('generateLink (signup) and inviteUserByEmail return the data as user_metadata', async () => {
    const admin = serviceClient(lb).auth.admin;
    const link = await admin.generateLink({
      type: 'signup',
      email: uniqueEmail('gl'),
      password: PASSWORD,
      options: { data: { stage: 'beta' } },
    });
    expect(link.error).toBeNull();
    expect(link.data.user?.user_metadata).toEqual({ stage: 'beta' });
    const invite = await admin.inviteUserByEmail(uniqueEmail('inv'), { data: { team: 'ops' } });
    expect(invite.error).toBeNull();
    expect(invite.data.user?.user_metadata).toEqual({ team: 'ops' });
  });
});

describe('listUsers pagination', () => {
  it('refuses a negative page through supabase-js with an error and no users', async () => {
    const { data, error } = await serviceClient(lb).auth.admin.listUsers({ page: -1, perPage: 10 });
    expect(data.users).toEqual([]);
    expect(error?.status).toBe(400);
    expect(error?.code).toBe('validation_failed');
    expect(error?.message).toBe('Bad Pagination Parameters: strconv.ParseUint: parsing "-1": invalid syntax');
  });

  it('refuses a per_page that is not a number', async () => {
    const res = await raw(lb, '/auth/v1/admin/users?per_page=ten', {
      apikey: lb.serviceRoleKey,
      bearer: lb.serviceRoleKey,
    });
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({
      code: 'validation_failed',
      message: 'Bad Pagination Parameters: strconv.ParseUint: parsing "ten": invalid syntax',
    });
  });
});
