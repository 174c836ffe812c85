/**
 * Aggregates (`count()`, `col.sum()`, … with aliases and casts, automatic GROUP BY, inside embeds), the legacy bare
 * `count`, spreads (to-one with hoisted aggregates, to-many as per-column arrays) and the precedence of
 * relationship errors over column errors — buildRead run on PGlite.
 */
import { describe, expect, it } from 'vitest';
import { PGlite } from '@electric-sql/pglite';
import { buildRead } from './build-read.ts';
import { RestError } from './errors.ts';
import { effectiveRange, parseQuery } from './parse.ts';
import type { SchemaCache } from './schema-cache.ts';
import { openSchemaDb } from './test-db.ts';

const SCHEMA = `
create table shoppers (id int primary key, nickname text not null, town text);
create table shopper_cards (id int primary key references shoppers(id), tier text);
create table baskets (id int primary key, shopper_id int not null references shoppers(id), placed date not null);
create table basket_items (id int primary key, basket_id int not null references baskets(id), sku text not null, qty int not null, price numeric(8,2) not null);
insert into shoppers values (1, 'ada', 'Oslo'), (2, 'bea', 'Rome'), (3, 'cid', 'Oslo');
insert into shopper_cards values (1, 'gold'), (2, 'silver');
insert into baskets values (100, 1, '2025-01-01'), (101, 1, '2025-01-02'), (102, 2, '2025-01-02');
insert into basket_items values
  (1, 100, 'pen', 2, 1.50), (2, 100, 'ink', 1, 4.00), (3, 101, 'pen', 5, 1.50), (4, 102, 'pad', 3, 2.25);
`;

let db: PGlite;
let cache: SchemaCache;

openSchemaDb(SCHEMA, (fx) => ({ db, cache } = fx));

async function rows(table: string, qs: string): Promise<unknown[]> {
  const query = parseQuery(qs);
  const range = effectiveRange(null, query.limit, query.offset, null);
  const stmt = buildRead({ cache, schema: 'public', table, query, offset: range.offset, limit: range.limit, count: false });
  const r = await db.query<{ body: string }>(stmt.sql, stmt.params);
  return JSON.parse(r.rows[0]!.body) as unknown[];
}

async function refused(table: string, qs: string): Promise<RestError> {
  try {
    await rows(table, qs);
  } catch (e) {
    if (e instanceof RestError) return e;
    throw e;
  }
  throw new Error(`expected ${qs} to be refused`);
}

describe('aggregates', () => {
  it('count(), col.fn() with aliases and casts, grouped by the other columns', async () => {
    expect(await rows('basket_items', 'select=count()')).toEqual([{ count: 4 }]);
    expect(await rows('basket_items', 'select=n:count()::text')).toEqual([{ n: '4' }]);
    expect(await rows('basket_items', 'select=qty.sum(),qty.max(),qty.min()')).toEqual([{ sum: 11, max: 5, min: 1 }]);
    expect(await rows('basket_items', 'select=total:qty.sum()::text,sku&order=sku')).toEqual([
      { total: '1', sku: 'ink' }, { total: '3', sku: 'pad' }, { total: '7', sku: 'pen' },
    ]);
    expect(await rows('basket_items', 'select=sku,avg:price.avg()::numeric&sku=eq.pen')).toEqual([{ sku: 'pen', avg: 1.5 }]);
    // an input cast sits before the function
    expect(await rows('basket_items', 'select=price::int.sum()')).toEqual([{ sum: 10 }]);
    // filters apply before grouping; no rows and no grouping column: one row of the empty aggregate
    expect(await rows('basket_items', 'select=qty.sum()&sku=eq.none')).toEqual([{ sum: null }]);
  });

  it('inside embeds (grouped within each parent) and grouping by an embed', async () => {
    expect(await rows('shoppers', 'select=nickname,baskets(count())&order=id')).toEqual([
      { nickname: 'ada', baskets: [{ count: 2 }] }, { nickname: 'bea', baskets: [{ count: 1 }] }, { nickname: 'cid', baskets: [{ count: 0 }] },
    ]);
    expect(await rows('baskets', 'select=id,basket_items(sku,qty.sum())&id=eq.100')).toEqual([
      { id: 100, basket_items: expect.arrayContaining([{ sku: 'pen', sum: 2 }, { sku: 'ink', sum: 1 }]) },
    ]);
    expect(await rows('baskets', 'select=n:count(),shoppers(town)')).toEqual(
      expect.arrayContaining([{ n: 2, shoppers: { town: 'Oslo' } }, { n: 1, shoppers: { town: 'Rome' } }]),
    );
    // to-one embed aggregate: one object per parent
    expect(await rows('baskets', 'select=id,shoppers(id.sum())&id=eq.102')).toEqual([{ id: 102, shoppers: { sum: 2 } }]);
  });

  it('legacy bare count counts the rows (PostgreSQL reads alias.count as count(alias))', async () => {
    expect(await rows('shoppers', 'select=nickname,baskets(count)&id=eq.1')).toEqual([{ nickname: 'ada', baskets: [{ count: 2 }] }]);
  });
});

describe('spreads', () => {
  it('to-one spread puts the columns in the parent; nested and with !inner', async () => {
    expect(await rows('baskets', 'select=id,...shoppers(nickname,...shopper_cards(tier))&order=id')).toEqual([
      { id: 100, nickname: 'ada', tier: 'gold' }, { id: 101, nickname: 'ada', tier: 'gold' }, { id: 102, nickname: 'bea', tier: 'silver' },
    ]);
    expect(await rows('shoppers', 'select=nickname,...shopper_cards(*)&order=id')).toEqual([
      { nickname: 'ada', id: 1, tier: 'gold' }, { nickname: 'bea', id: 2, tier: 'silver' }, { nickname: 'cid', id: null, tier: null },
    ]);
    expect(await rows('shoppers', 'select=nickname,...shopper_cards!inner(tier)&order=id')).toEqual([
      { nickname: 'ada', tier: 'gold' }, { nickname: 'bea', tier: 'silver' },
    ]);
  });

  it('aggregates in a to-one spread are hoisted to the parent and grouped by its other columns', async () => {
    expect(await rows('baskets', 'select=count(),...shoppers(town)')).toEqual(
      expect.arrayContaining([{ count: 2, town: 'Oslo' }, { count: 1, town: 'Rome' }]),
    );
    expect(await rows('basket_items', 'select=sku,...baskets(ids:shopper_id.sum())&sku=eq.pen')).toEqual([{ sku: 'pen', ids: 2 }]);
  });

  it('to-many spread gives one array per column, ordered and limited by the embed', async () => {
    expect(await rows('baskets', 'select=id,...basket_items(sku,qty)&basket_items.order=id.desc&id=eq.100')).toEqual([
      { id: 100, sku: ['ink', 'pen'], qty: [1, 2] },
    ]);
    expect(await rows('shoppers', 'select=nickname,...baskets(id)&id=eq.3')).toEqual([{ nickname: 'cid', id: [] }]);
    expect((await refused('baskets', 'select=...basket_items(qty.sum())')).toJSON()).toMatchObject({ code: 'PGRST127' });
  });
});

describe('errors as PostgREST reports them', () => {
  it('columns of embedded levels are named <table>_<depth>; unknown aggregate input is 42703', async () => {
    expect((await refused('shoppers', 'select=baskets(sum)')).toJSON()).toMatchObject({ code: '42703', message: 'column baskets_1.sum does not exist' });
    expect((await refused('shoppers', 'select=x:missing.count()')).toJSON()).toMatchObject({ code: '42703', message: 'column shoppers.missing does not exist' });
    expect((await refused('basket_items', 'select=qty.sum()::evil')).code).toBe('42704');
  });

  it('a missing relationship is reported before a missing column', async () => {
    const e = await refused('shoppers', 'select=missing_col,baskets(id,...nothing_here(x))');
    expect(e.toJSON()).toMatchObject({ code: 'PGRST200' });
  });
});
