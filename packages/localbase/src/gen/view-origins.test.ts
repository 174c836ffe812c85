import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPGlite } from '../db/pglite.ts';
import type { Database } from '../db/types.ts';
import { introspect } from './introspect.ts';
import { viewColumnOrigins } from './view-origins.ts';

let db: Database;
beforeAll(async () => {
  db = await openPGlite({});
  await db.exec(`
    create table authors (id int primary key, "full name" text);
    create table posts (id int primary key, author_id int references authors, title text);
    create view post_list as
      select p.id, p.title, lower(p.title) as low, a."full name" as author, p.author_id, p.author_id as writer
        from posts p join authors a on a.id = p.author_id
       where exists (select 1 from authors x where x.id = p.author_id);
    create view author_names as select id as key, "full name" from authors;
    create view post_titles as select title, author_id from post_list;
  `);
});
afterAll(() => db.close());

const rule = async (view: string) =>
  (await db.query<{ a: string }>(`select ev_action::text as a from pg_rewrite where ev_class = $1::regclass`, [view])).rows[0]!.a;

describe('view column origins', () => {
  it('reads which view columns are plain column references, skipping expressions and subqueries', async () => {
    const oid = async (name: string) => (await db.query<{ o: number }>('select $1::regclass::oid::int as o', [name])).rows[0]!.o;
    const [posts, authors] = [await oid('posts'), await oid('authors')];
    expect(viewColumnOrigins(await rule('post_list'))).toEqual([
      { resno: 1, table: posts, column: 1 },
      { resno: 2, table: posts, column: 3 },
      { resno: 4, table: authors, column: 2 },
      { resno: 5, table: posts, column: 2 },
      { resno: 6, table: posts, column: 2 },
    ]);
    expect(viewColumnOrigins('not a query tree')).toEqual([]);
  });

  it('repeats a foreign key through every view showing its columns, on either side and through views of views', async () => {
    const { relationships } = await introspect(db, ['public']);
    const rows = (relationships ?? []).map((r) => `${r.relation}(${r.columns}) -> ${r.refRelation}(${r.refColumns})`).sort();
    expect(rows).toEqual([
      'post_list(author_id) -> author_names(key)',
      'post_list(author_id) -> authors(id)',
      'post_list(writer) -> author_names(key)',
      'post_list(writer) -> authors(id)',
      'post_titles(author_id) -> author_names(key)',
      'post_titles(author_id) -> authors(id)',
      'posts(author_id) -> author_names(key)',
      'posts(author_id) -> authors(id)',
    ]);
  });
});
