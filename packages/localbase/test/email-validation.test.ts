// Addresses GoTrue's format check refuses are refused everywhere an address comes in: sign-up, admin create,
// invite, generate_link — 400 validation_failed "Unable to validate email address: invalid format".
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD, anonClient, serviceClient, startTestServer, uniqueEmail, type Localbase } from './helpers.ts';

let lb: Localbase;

beforeAll(async () => {
  lb = await startTestServer();
});

afterAll(async () => {
  await lb?.stop();
});

const BAD = 'ab:;c@d.e';
const expected = { status: 400, code: 'validation_failed', message: 'Unable to validate email address: invalid format' };

function shape(error: { status?: number; code?: string; message: string } | null) {
  return error && { status: error.status, code: error.code, message: error.message };
}

describe('email format', () => {
  it('admin createUser refuses it', async () => {
    const { data, error } = await serviceClient(lb).auth.admin.createUser({ email: BAD, password: PASSWORD });
    expect(data.user).toBeNull();
    expect(shape(error)).toEqual(expected);
  });

  it('inviteUserByEmail refuses it', async () => {
    const { error } = await serviceClient(lb).auth.admin.inviteUserByEmail(BAD);
    expect(shape(error)).toEqual(expected);
  });

  it('generateLink refuses it', async () => {
    const { error } = await serviceClient(lb).auth.admin.generateLink({ type: 'magiclink', email: BAD });
    expect(shape(error)).toEqual(expected);
  });

  it('signUp refuses it', async () => {
    const { error } = await anonClient(lb).auth.signUp({ email: BAD, password: PASSWORD });
    expect(shape(error)).toEqual(expected);
  });
});

describe('an address with surrounding spaces, as GoTrue: validated as sent, never trimmed', () => {
  // localbase trimmed it: an app that forgot to trim its form's input signed people up and in here, and failed with
  // "invalid format" / "Invalid login credentials" on Supabase.
  const address = uniqueEmail('spaced'); // unique: on PostgreSQL the test files share one database

  it('signUp, signInWithOtp, resetPasswordForEmail, resend and admin createUser refuse it as an invalid format', async () => {
    const anon = anonClient(lb);
    expect(shape((await anon.auth.signUp({ email: ` ${address} `, password: PASSWORD })).error)).toEqual(expected);
    expect(shape((await anon.auth.signInWithOtp({ email: `${address} ` })).error)).toEqual(expected);
    expect(shape((await anon.auth.resetPasswordForEmail(` ${address}`)).error)).toEqual(expected);
    expect(shape((await anon.auth.resend({ type: 'signup', email: ` ${address}` })).error)).toEqual(expected);
    expect(shape((await serviceClient(lb).auth.admin.createUser({ email: `${address} `, password: PASSWORD })).error)).toEqual(expected);
  });

  it('a password sign-in with it finds no account; verifyOtp answers 422 "Invalid email format"', async () => {
    const anon = anonClient(lb);
    expect((await anon.auth.signUp({ email: address, password: PASSWORD })).error).toBeNull();
    const spaced = await anonClient(lb).auth.signInWithPassword({ email: ` ${address}`, password: PASSWORD });
    expect(shape(spaced.error)).toEqual({ status: 400, code: 'invalid_credentials', message: 'Invalid login credentials' });
    expect((await anonClient(lb).auth.signInWithPassword({ email: address.toUpperCase(), password: PASSWORD })).error).toBeNull();
    const verified = await anon.auth.verifyOtp({ type: 'email', email: ` ${address}`, token: '123456' });
    expect(shape(verified.error)).toEqual({ status: 422, code: 'validation_failed', message: 'Invalid email format' });
  });
});
