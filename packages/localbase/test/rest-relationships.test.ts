// /rest/v1 relationships beyond plain foreign keys, through the official supabase-js client: functions of a row
// embedded as relationships and selected/filtered/ordered as columns, self references, foreign keys seen through
// views, empty embeds and duplicate embeds. Fixture: test/fixtures/rest-migrations/20250301000000_rest_relationships.sql.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SupabaseClient } from '@supabase/supabase-js';
import { restFixture, type RestFixture } from './rest-helpers.ts';

let f: RestFixture;
let db: SupabaseClient;
const id: Record<string, number> = {};

async function insert(table: string, rows: Record<string, unknown>[]): Promise<Array<{ id: number }>> {
  const r = await db.from(table).insert(rows.map((row) => ({ run: f.run, ...row }))).select('id');
  expect(r.error).toBeNull();
  return r.data as Array<{ id: number }>;
}

beforeAll(async () => {
  f = await restFixture();
  db = f.service;
  const [ursula, terry, nobody] = await insert('rel_authors', [{ name: 'Ursula' }, { name: 'Terry' }, { name: 'Nobody' }]);
  Object.assign(id, { ursula: ursula!.id, terry: terry!.id, nobody: nobody!.id });
  const books = await insert('rel_books', [
    { author_id: id.ursula, title: 'Earthsea', pages: 250 },
    { author_id: id.ursula, title: 'Dispossessed', pages: 380 },
    { author_id: id.terry, title: 'Mort', pages: 320 },
  ]);
  Object.assign(id, { earthsea: books[0]!.id, dispossessed: books[1]!.id, mort: books[2]!.id });
  const [root] = await insert('rel_folders', [{ name: 'root' }]);
  const [docs, pics] = await insert('rel_folders', [
    { name: 'docs', parent_id: root!.id },
    { name: 'pics', parent_id: root!.id },
  ]);
  Object.assign(id, { root: root!.id, docs: docs!.id, pics: pics!.id });
  const [boss] = await insert('rel_staff', [{ name: 'boss' }]);
  const [dev] = await insert('rel_staff', [{ name: 'dev', manager_id: boss!.id, mentor_id: boss!.id }]);
  Object.assign(id, { boss: boss!.id, dev: dev!.id });
});

afterAll(async () => {
  await f?.lb.stop();
});

describe('computed relationships (functions of a row returning rows)', () => {
  it('setof: to-many array, with field selection, filters, order and limit on the embed', async () => {
    const r = await db
      .from('rel_authors')
      .select('name, works:rel_books_of(title, pages)')
      .eq('run', f.run)
      .order('name')
      .order('title', { referencedTable: 'works' });
    expect([r.status, r.error]).toEqual([200, null]);
    expect(r.data).toEqual([
      { name: 'Nobody', works: [] },
      { name: 'Terry', works: [{ title: 'Mort', pages: 320 }] },
      { name: 'Ursula', works: [{ title: 'Dispossessed', pages: 380 }, { title: 'Earthsea', pages: 250 }] },
    ]);
    const filtered = await db
      .from('rel_authors')
      .select('name, rel_books_of(title)')
      .eq('id', id.ursula)
      .gt('rel_books_of.pages', 300)
      .single();
    expect(filtered.data).toEqual({ name: 'Ursula', rel_books_of: [{ title: 'Dispossessed' }] });
    const limited = await db.from('rel_authors').select('rel_books_of(*)').eq('id', id.ursula).order('pages', { referencedTable: 'rel_books_of' }).limit(1, { referencedTable: 'rel_books_of' }).single();
    expect(limited.data).toEqual({ rel_books_of: [{ id: id.earthsea, run: f.run, author_id: id.ursula, title: 'Earthsea', pages: 250 }] });
  });

  it('setof … rows 1 and a plain composite result: to-one object (null, or all-null fields, when nothing matches)', async () => {
    const r = await db.from('rel_authors').select('name, thickest:rel_thickest_book(title)').eq('run', f.run).order('name');
    expect(r.data).toEqual([
      { name: 'Nobody', thickest: null },
      { name: 'Terry', thickest: { title: 'Mort' } },
      { name: 'Ursula', thickest: { title: 'Dispossessed' } },
    ]);
    const byRow = await db.from('rel_books').select('title, rel_written_by(name)').eq('id', id.mort).single();
    expect(byRow.data).toEqual({ title: 'Mort', rel_written_by: { name: 'Terry' } });
    // !inner drops the rows whose to-one function returns nothing
    const inner = await db.from('rel_authors').select('name, rel_thickest_book!inner(title)').eq('run', f.run).order('name');
    expect(inner.data).toEqual([
      { name: 'Terry', rel_thickest_book: { title: 'Mort' } },
      { name: 'Ursula', rel_thickest_book: { title: 'Dispossessed' } },
    ]);
  });

  it('nests: a function embed inside a function embed, and an FK embed inside a function embed', async () => {
    const r = await db
      .from('rel_authors')
      .select('name, rel_books_of(title, rel_written_by(name), rel_authors(id))')
      .eq('id', id.terry)
      .single();
    expect(r.data).toEqual({ name: 'Terry', rel_books_of: [{ title: 'Mort', rel_written_by: { name: 'Terry' }, rel_authors: { id: id.terry } }] });
  });

  it('a view as the argument and as the result', async () => {
    const r = await db.from('rel_author_cards').select('name, rel_long_books_by(title, writer)').eq('card_id', id.ursula).single();
    expect(r.data).toEqual({ name: 'Ursula', rel_long_books_by: [{ title: 'Dispossessed', writer: id.ursula }] });
  });

  it('functions without a row argument are not relationships: 400 PGRST200', async () => {
    const r = await db.from('rel_authors').select('id, rel_all_books(*)');
    expect([r.status, r.error?.code, r.error?.message, r.error?.details]).toEqual([
      400,
      'PGRST200',
      "Could not find a relationship between 'rel_authors' and 'rel_all_books' in the schema cache",
      "Searched for a foreign key relationship between 'rel_authors' and 'rel_all_books' in the schema 'public', but no matches were found.",
    ]);
  });
});

describe('computed fields (functions of a row returning a value)', () => {
  it('are selected by name (not by *), aliased, cast, and work inside embeds and on views', async () => {
    const r = await db.from('rel_books').select('title, rel_headline, n:rel_headline::text').eq('id', id.earthsea).single();
    expect(r.data).toEqual({ title: 'Earthsea', rel_headline: 'EARTHSEA (250)', n: 'EARTHSEA (250)' });
    const star = await db.from('rel_books').select('*').eq('id', id.earthsea).single();
    expect(Object.keys(star.data ?? {}).sort()).toEqual(['author_id', 'id', 'pages', 'run', 'title']);
    const embedded = await db.from('rel_authors').select('name, rel_page_total, rel_books(*, rel_headline)').eq('id', id.terry).single();
    expect(embedded.data).toEqual({
      name: 'Terry',
      rel_page_total: 320,
      rel_books: [{ id: id.mort, run: f.run, author_id: id.terry, title: 'Mort', pages: 320, rel_headline: 'MORT (320)' }],
    });
    const view = await db.from('rel_long_books').select('title, rel_headline').eq('run', f.run).order('title');
    expect(view.data).toEqual([
      { title: 'Dispossessed', rel_headline: 'long: Dispossessed' },
      { title: 'Mort', rel_headline: 'long: Mort' },
    ]);
  });

  it('filter and order like columns; an unknown name is still 400 42703', async () => {
    const r = await db.from('rel_authors').select('name').eq('run', f.run).gt('rel_page_total', 0).order('rel_page_total', { ascending: false });
    expect(r.data).toEqual([{ name: 'Ursula' }, { name: 'Terry' }]);
    const like = await db.from('rel_books').select('title').eq('run', f.run).like('rel_headline', 'MORT*');
    expect(like.data).toEqual([{ title: 'Mort' }]);
    const bad = await db.from('rel_books').select('title, rel_nothing');
    expect([bad.status, bad.error?.code, bad.error?.message]).toEqual([400, '42703', 'column rel_books.rel_nothing does not exist']);
  });
});

describe('computed fields and relationships after writes and rpc', () => {
  it('return=representation and an rpc returning rows select them too', async () => {
    const ins = await db
      .from('rel_books')
      .insert({ run: f.run, author_id: id.nobody, title: 'Blank', pages: 10 })
      .select('title, rel_headline, rel_written_by(name)')
      .single();
    expect([ins.status, ins.data]).toEqual([201, { title: 'Blank', rel_headline: 'BLANK (10)', rel_written_by: { name: 'Nobody' } }]);
    const upd = await db.from('rel_books').update({ pages: 12 }).eq('run', f.run).eq('title', 'Blank').select('rel_headline').single();
    expect(upd.data).toEqual({ rel_headline: 'BLANK (12)' });
    const rpc = await db.rpc('rel_all_books').select('title, rel_headline, rel_written_by(name)').eq('run', f.run).eq('author_id', id.nobody);
    expect([rpc.status, rpc.data]).toEqual([200, [{ title: 'Blank', rel_headline: 'BLANK (12)', rel_written_by: { name: 'Nobody' } }]]);
    const del = await db.from('rel_books').delete().eq('run', f.run).eq('title', 'Blank').select('title, rel_headline');
    expect(del.data).toEqual([{ title: 'Blank', rel_headline: 'BLANK (12)' }]);
  });
});

describe('self references', () => {
  it('the table name embeds the children, the FK column (or an alias of it) the parent', async () => {
    const children = await db.from('rel_folders').select('name, rel_folders(name)').eq('id', id.root).order('name', { referencedTable: 'rel_folders' }).single();
    expect([children.status, children.data]).toEqual([200, { name: 'root', rel_folders: [{ name: 'docs' }, { name: 'pics' }] }]);
    const hinted = await db.from('rel_folders').select('name, rel_folders!parent_id(name)').eq('id', id.root).order('name', { referencedTable: 'rel_folders' }).single();
    expect(hinted.data).toEqual(children.data);
    const parent = await db.from('rel_folders').select('name, parent_id(name)').eq('id', id.docs).single();
    expect(parent.data).toEqual({ name: 'docs', parent_id: { name: 'root' } });
    const aliased = await db.from('rel_folders').select('name, up:parent_id(name)').eq('id', id.root).single();
    expect(aliased.data).toEqual({ name: 'root', up: null });
  });

  it('the constraint name as hint finds nothing (PostgREST): 400 PGRST200', async () => {
    const r = await db.from('rel_folders').select('name, rel_folders!rel_folders_parent_id_fkey(name)');
    expect([r.status, r.error]).toEqual([
      400,
      {
        code: 'PGRST200',
        message: "Could not find a relationship between 'rel_folders' and 'rel_folders' in the schema cache",
        details:
          "Searched for a foreign key relationship between 'rel_folders' and 'rel_folders' using the hint 'rel_folders_parent_id_fkey' in the schema 'public', but no matches were found.",
        hint: null,
      },
    ]);
  });

  it('two self references: the table name is ambiguous (300 PGRST201), the FK column hint picks one', async () => {
    const r = await db.from('rel_staff').select('name, reports:rel_staff(name)');
    expect([r.status, r.error]).toEqual([
      300,
      {
        code: 'PGRST201',
        message: "Could not embed because more than one relationship was found for 'rel_staff' and 'rel_staff'",
        details: [
          { cardinality: 'one-to-many', embedding: 'rel_staff with rel_staff', relationship: 'rel_staff_manager_fk using rel_staff(id) and rel_staff(manager_id)' },
          { cardinality: 'one-to-many', embedding: 'rel_staff with rel_staff', relationship: 'rel_staff_mentor_fk using rel_staff(id) and rel_staff(mentor_id)' },
        ],
        hint: "Try changing 'rel_staff' to one of the following: 'rel_staff!rel_staff_manager_fk', 'rel_staff!rel_staff_mentor_fk'. Find the desired relationship in the 'details' key.",
      },
    ]);
    const reports = await db.from('rel_staff').select('name, reports:rel_staff!manager_id(name), mentees:rel_staff!mentor_id(name)').eq('id', id.boss).single();
    expect(reports.data).toEqual({ name: 'boss', reports: [{ name: 'dev' }], mentees: [{ name: 'dev' }] });
    const up = await db.from('rel_staff').select('name, boss:manager_id(name), mentor:mentor_id(name)').eq('id', id.dev).single();
    expect(up.data).toEqual({ name: 'dev', boss: { name: 'boss' }, mentor: { name: 'boss' } });
  });
});

describe('relationships through views', () => {
  it('a view column taken from an FK column (renamed too) or a referenced key carries the foreign key', async () => {
    const toTable = await db.from('rel_long_books').select('title, rel_authors(name)').eq('run', f.run).order('title');
    expect(toTable.data).toEqual([
      { title: 'Dispossessed', rel_authors: { name: 'Ursula' } },
      { title: 'Mort', rel_authors: { name: 'Terry' } },
    ]);
    const fromTable = await db.from('rel_authors').select('name, rel_long_books(title)').eq('id', id.ursula).single();
    expect(fromTable.data).toEqual({ name: 'Ursula', rel_long_books: [{ title: 'Dispossessed' }] });
    const viewToView = await db.from('rel_long_books_again').select('title, rel_author_cards(name, shout)').eq('id', id.mort).single();
    expect(viewToView.data).toEqual({ title: 'Mort', rel_author_cards: { name: 'Terry', shout: 'TERRY' } });
    const tableToView = await db.from('rel_books').select('title, rel_author_cards!inner(name)').eq('run', f.run).eq('rel_author_cards.name', 'Terry');
    expect(tableToView.data).toEqual([{ title: 'Mort', rel_author_cards: { name: 'Terry' } }]);
  });

  it('the constraint or column as embed name still means the table, not the views', async () => {
    const r = await db.from('rel_books').select('title, author_id(name), rel_books_author_id_fkey(name)').eq('id', id.mort).single();
    expect(r.data).toEqual({ title: 'Mort', author_id: { name: 'Terry' }, rel_books_author_id_fkey: { name: 'Terry' } });
  });
});

describe('embeds that select nothing, and duplicates', () => {
  it('`rel(…)` with no fields leaves the key out; with !inner it still filters', async () => {
    const r = await db.from('rel_books').select('title, rel_authors()').eq('id', id.mort).single();
    expect(r.data).toEqual({ title: 'Mort' });
    const inner = await db.from('rel_authors').select('name, rel_books!inner()').eq('run', f.run).order('name');
    expect(inner.data).toEqual([{ name: 'Terry' }, { name: 'Ursula' }]);
  });

  it('the same relation embedded twice without distinct aliases: 400 42712; with aliases it works', async () => {
    const r = await db.from('rel_staff').select('manager_id(name), manager_id(id)').eq('id', id.dev);
    expect([r.status, r.error]).toEqual([
      400,
      { code: '42712', message: 'table name "rel_staff_manager_id_1" specified more than once', details: null, hint: null },
    ]);
    const ok = await db.from('rel_staff').select('a:manager_id(name), b:manager_id(id)').eq('id', id.dev).single();
    expect(ok.data).toEqual({ a: { name: 'boss' }, b: { id: id.boss } });
  });
});
