import { describe, expect, it } from 'vitest';
import { ApiError } from '../http/errors.ts';
import { validateEmail } from './service.ts';

function refusal(email: string): { status: number; code: string; message: string } | undefined {
  try {
    validateEmail(email);
    return undefined;
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return { status: err.status, code: err.code, message: err.message };
  }
}

describe('validateEmail (GoTrue: length, then the format check of its mailer)', () => {
  it('accepts ordinary addresses and lower-cases them', () => {
    expect(validateEmail('Ada.Lovelace+notes@Example.COM')).toBe('ada.lovelace+notes@example.com');
    expect(validateEmail("o'hara!#$%&*/=?^_`{|}~-@mail-1.example.org")).toBe("o'hara!#$%&*/=?^_`{|}~-@mail-1.example.org");
    expect(validateEmail('root@localhost')).toBe('root@localhost');
  });

  it.each(['xx:;x@x.x', 'a b@example.com', 'a@-example.com', 'a@example-.com', 'a@exa_mple.com', 'a@example..com', 'a@.com', '@example.com', 'a@', 'no-at-sign', 'a@b@c.d', 'é@example.com'])(
    'refuses %j with 400 validation_failed "invalid format"',
    (email) => {
      expect(refusal(email)).toEqual({
        status: 400,
        code: 'validation_failed',
        message: 'Unable to validate email address: invalid format',
      });
    },
  );

  it('refuses a domain label longer than 63 characters', () => {
    expect(refusal(`a@${'b'.repeat(63)}.com`)).toBeUndefined();
    expect(refusal(`a@${'b'.repeat(64)}.com`)?.message).toBe('Unable to validate email address: invalid format');
  });

  it('refuses an address over 255 characters as too long', () => {
    expect(refusal(`${'a'.repeat(250)}@example.com`)).toEqual({
      status: 400,
      code: 'validation_failed',
      message: 'An email address is too long',
    });
  });
});
