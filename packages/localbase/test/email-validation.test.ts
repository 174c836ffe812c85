// Addresses GoTrue's format check refuses are refused everywhere an address comes in: sign-up, admin create,
// invite, generate_link — 400 validation_failed "Unable to validate email address: invalid format".
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD, anonClient, serviceClient, startTestServer, type Localbase } from './helpers.ts';

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
