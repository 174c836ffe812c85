import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PGlite } from '@electric-sql/pglite';
import { RestError } from './errors.ts';
import { isPgError, pgErrorStatus, quoteIdent, quoteQualified, restErrorFromPg } from './sql.ts';

let db: PGlite;

beforeAll(async () => {
  db = new PGlite();
  await db.exec(`
    create role anon nologin;
    create role authenticated nologin;
    create table parents (id int primary key);
    create table kids (
      id int primary key,
      parent_id int references parents(id),
      name text not null,
      age int check (age >= 0)
    );
    insert into parents values (1);
    insert into kids values (1, 1, 'a', 3);
    alter table kids enable row level security;
    create policy mine on kids for all to authenticated using (false) with check (false);
    grant select, insert on kids to authenticated;
    create function boom() returns void language plpgsql as $$
      begin raise exception 'custom failure' using detail = 'the detail', hint = 'the hint'; end $$;
    create function teapot() returns void language plpgsql as $$
      begin raise sqlstate 'PT418' using message = 'short and stout'; end $$;
  `);
});

afterAll(async () => {
  await db.close();
});

/** Runs SQL and returns the RestError its failure maps to. */
async function failure(sql: string, params: unknown[] = [], opts: { role?: string } = {}): Promise<RestError> {
  try {
    if (opts.role) {
      await db.transaction(async (tx) => {
        await tx.query(`select set_config('role', $1, true)`, [opts.role]);
        await tx.query(sql, params);
      });
    } else {
      await db.query(sql, params);
    }
  } catch (e) {
    expect(isPgError(e)).toBe(true);
    return restErrorFromPg(e as Error & { code: string }, opts.role !== 'anon');
  }
  throw new Error(`expected ${sql} to fail`);
}

describe('quoteIdent', () => {
  it('quotes and doubles quotes so any name is one identifier', async () => {
    expect(quoteIdent('todos')).toBe('"todos"');
    expect(quoteIdent('a"b')).toBe('"a""b"');
    expect(quoteQualified('public', 'x y')).toBe('"public"."x y"');
    const nasty = 'x"; drop table parents; --';
    await db.exec(`create table ${quoteIdent(nasty)} (${quoteIdent('col"')} int)`);
    await db.query(`insert into ${quoteQualified('public', nasty)} (${quoteIdent('col"')}) values ($1)`, [7]);
    const r = await db.query<{ v: number }>(`select ${quoteIdent('col"')} as v from ${quoteQualified('public', nasty)}`);
    expect(r.rows).toEqual([{ v: 7 }]);
    expect((await db.query('select count(*)::int as n from parents')).rows).toEqual([{ n: 1 }]);
    expect(() => quoteIdent('a\u0000b')).toThrow(RestError);
  });
});

describe('PostgreSQL errors → PostgREST status and body (real errors from PGlite)', () => {
  it('unique and foreign-key violations are 409', async () => {
    const u = await failure('insert into parents values (1)');
    expect([u.status, u.code]).toEqual([409, '23505']);
    expect(u.details).toBe('Key (id)=(1) already exists.');
    const f = await failure('insert into kids values (2, 99, $1, 1)', ['b']);
    expect([f.status, f.code]).toEqual([409, '23503']);
  });

  it('not-null, check, bad input syntax and unknown column are 400', async () => {
    expect((await failure('insert into kids (id, parent_id) values (3, 1)')).toJSON()).toMatchObject({ code: '23502' });
    expect((await failure('insert into kids (id, parent_id) values (3, 1)')).status).toBe(400);
    expect((await failure('insert into kids values (3, 1, $1, -1)', ['c'])).status).toBe(400);
    const bad = await failure('select * from kids where id = $1::int', ['abc']);
    expect([bad.status, bad.code, bad.message]).toEqual([400, '22P02', 'invalid input syntax for type integer: "abc"']);
    expect((await failure('select nope from kids')).code).toBe('42703');
  });

  it('permission and RLS violations: 401 for anon, 403 for an authenticated role', async () => {
    const anon = await failure('select * from kids', [], { role: 'anon' });
    expect([anon.status, anon.code]).toEqual([401, '42501']);
    const rls = await failure('insert into kids values (5, 1, $1, 1)', ['e'], { role: 'authenticated' });
    expect([rls.status, rls.code]).toEqual([403, '42501']);
    expect(rls.message).toBe('new row violates row-level security policy for table "kids"');
  });

  it('RAISE EXCEPTION keeps message, detail and hint (400); PTxxx sets the status', async () => {
    expect((await failure('select boom()')).toJSON()).toEqual({ code: 'P0001', message: 'custom failure', details: 'the detail', hint: 'the hint' });
    expect((await failure('select boom()')).status).toBe(400);
    const t = await failure('select teapot()');
    expect([t.status, t.code, t.message]).toEqual([418, 'PT418', 'short and stout']);
  });

  it('undefined function / table are 404; read-only violation 405', async () => {
    expect((await failure('select no_such_fn(1)')).status).toBe(404);
    expect((await failure('select * from no_such_table')).status).toBe(404);
    let ro: RestError | null = null;
    try {
      await db.transaction(async (tx) => {
        await tx.exec('set transaction read only');
        await tx.query('insert into parents values (9)');
      });
    } catch (e) {
      ro = restErrorFromPg(e as Error & { code: string }, true);
    }
    expect([ro?.status, ro?.code]).toEqual([405, '25006']);
  });

  it('status table for codes that are hard to provoke', () => {
    // statement timeout (a server's statement_timeout, or PGlite's worker deadline): PostgREST answers 500;
    // 08006: the PGlite worker crashed during the statement (it is reopened)
    expect(pgErrorStatus('57014', true)).toBe(500);
    expect(pgErrorStatus('08006', true)).toBe(503);
    expect(pgErrorStatus('53100', true)).toBe(503);
    expect(pgErrorStatus('53400', true)).toBe(500);
    expect(pgErrorStatus('28P01', true)).toBe(403);
    expect(pgErrorStatus('42P17', true)).toBe(500);
    expect(pgErrorStatus('PTxyz', true)).toBe(500);
    expect(pgErrorStatus('XX000', true)).toBe(500);
    expect(pgErrorStatus('22023', true)).toBe(400);
  });
});
