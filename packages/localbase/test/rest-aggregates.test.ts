// /rest/v1 aggregates, spreads, CSV, execution plans and planner counts through the official supabase-js client
// (fixture: test/fixtures/rest-migrations/20250302000000_rest_aggregates.sql).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeOfBody, restRaw, runTag, setAuthenticatorSetting, startRestServer } from './rest-helpers.ts';
import { serviceClient, type Localbase } from './helpers.ts';
import type { SupabaseClient } from '@supabase/supabase-js';

let lb: Localbase;
let db: SupabaseClient;
const run = runTag('agg');
const cust: Record<string, number> = {};
const orders: Record<string, number> = {};

beforeAll(async () => {
  lb = await startRestServer();
  db = serviceClient(lb);
  const c = await db
    .from('ag_customers')
    .insert([
      { run, name: 'Ines', city: 'Lyon' },
      { run, name: 'Joao', city: 'Porto' },
      { run, name: 'Kai', city: 'Lyon' },
    ])
    .select('id, name');
  expect(c.error).toBeNull();
  for (const r of c.data ?? []) cust[r.name as string] = r.id as number;
  expect((await db.from('ag_loyalty').insert([{ customer_id: cust.Ines, tier: 'gold' }, { customer_id: cust.Joao, tier: 'basic' }])).error).toBeNull();
  const o = await db
    .from('ag_orders')
    .insert([
      { run, customer_id: cust.Ines, placed_on: '2025-03-01', note: 'leave at door, "back" gate' },
      { run, customer_id: cust.Ines, placed_on: '2025-03-02', note: null },
      { run, customer_id: cust.Joao, placed_on: '2025-03-02', note: '' },
    ])
    .select('id, placed_on, customer_id');
  expect(o.error).toBeNull();
  for (const r of o.data ?? []) orders[`${r.customer_id === cust.Ines ? 'ines' : 'joao'}-${r.placed_on as string}`] = r.id as number;
  const li = await db.from('ag_line_items').insert([
    { order_id: orders['ines-2025-03-01'], product: 'tea', quantity: 2, unit_price: 3.5 },
    { order_id: orders['ines-2025-03-01'], product: 'cup', quantity: 1, unit_price: 8 },
    { order_id: orders['ines-2025-03-02'], product: 'tea', quantity: 4, unit_price: 3.5 },
    { order_id: orders['joao-2025-03-02'], product: 'pot', quantity: 1, unit_price: 20 },
  ]);
  expect(li.error).toBeNull();
});

afterAll(async () => {
  await lb?.stop();
});

describe('aggregates', () => {
  it('count of an embed (count(), col.count(), legacy count) with aliases', async () => {
    const r = await db.from('ag_customers').select('name, ag_orders(count)').eq('run', run).order('name');
    expect(r.error).toBeNull();
    expect(r.data).toEqual([
      { name: 'Ines', ag_orders: [{ count: 2 }] },
      { name: 'Joao', ag_orders: [{ count: 1 }] },
      { name: 'Kai', ag_orders: [{ count: 0 }] },
    ]);
    const a = await db.from('ag_customers').select('name, ag_orders(n:count(), notes:note.count())').eq('run', run).eq('name', 'Ines').single();
    expect(a.data).toEqual({ name: 'Ines', ag_orders: [{ n: 2, notes: 1 }] });
  });

  it('sum / avg / min / max with casts, grouped by the other selected columns', async () => {
    const r = await db
      .from('ag_line_items')
      .select('product, qty:quantity.sum(), quantity.max(), avg_price:unit_price.avg()::text')
      .in('order_id', Object.values(orders))
      .order('product');
    expect(r.error).toBeNull();
    expect(r.data).toEqual([
      { product: 'cup', qty: 1, max: 1, avg_price: '8.0000000000000000' },
      { product: 'pot', qty: 1, max: 1, avg_price: '20.0000000000000000' },
      { product: 'tea', qty: 6, max: 4, avg_price: '3.5000000000000000' },
    ]);
    const root = await db.from('ag_orders').select('placed_on, count()').eq('run', run).order('placed_on');
    expect(root.data).toEqual([{ placed_on: '2025-03-01', count: 1 }, { placed_on: '2025-03-02', count: 2 }]);
    const nested = await db
      .from('ag_orders')
      .select('placed_on, ag_line_items(total:quantity.sum())')
      .eq('id', orders['ines-2025-03-01'])
      .single();
    expect(nested.data).toEqual({ placed_on: '2025-03-01', ag_line_items: [{ total: 3 }] });
  });

  it('errors: unknown column of an embed names PostgREST\'s alias, a missing relationship comes first', async () => {
    const sum = await db.from('ag_customers').select('name, ag_orders(sum)').eq('run', run);
    expect([sum.status, sum.error?.code, sum.error?.message]).toEqual([400, '42703', 'column ag_orders_1.sum does not exist']);
    const both = await db.from('ag_customers').select('nope, ag_orders(id, ...no_such_table(x))').eq('run', run);
    expect([both.status, both.error?.code]).toEqual([400, 'PGRST200']);
    const castAgg = await db.from('ag_orders').select('note, ag_customers.count()::text').eq('run', run);
    expect([castAgg.error?.code, castAgg.error?.message]).toEqual(['42703', 'column ag_orders.ag_customers does not exist']);
  });
});

describe('spreads', () => {
  it('to-one spread: the related columns sit in the parent, nested spreads too', async () => {
    const r = await db
      .from('ag_orders')
      .select('placed_on, ...ag_customers(name, ...ag_loyalty(tier))')
      .eq('run', run)
      .order('id');
    expect(r.error).toBeNull();
    expect(r.data).toEqual([
      { placed_on: '2025-03-01', name: 'Ines', tier: 'gold' },
      { placed_on: '2025-03-02', name: 'Ines', tier: 'gold' },
      { placed_on: '2025-03-02', name: 'Joao', tier: 'basic' },
    ]);
  });

  it('aggregates inside a to-one spread are computed at the parent, grouped by the rest', async () => {
    const r = await db.from('ag_orders').select('orders:count(), ...ag_customers(city)').eq('run', run);
    expect(r.error).toBeNull();
    expect(r.data).toHaveLength(2);
    expect(r.data).toEqual(expect.arrayContaining([{ orders: 2, city: 'Lyon' }, { orders: 1, city: 'Porto' }]));
    const byCustomer = await db.from('ag_customers').select('name, ag_orders(count(), ...ag_customers(city))').eq('run', run).eq('name', 'Joao').single();
    expect(byCustomer.data).toEqual({ name: 'Joao', ag_orders: [{ count: 1, city: 'Porto' }] });
  });

  it('to-many spread: one array per column, in the embed\'s order', async () => {
    const r = await db
      .from('ag_customers')
      .select('name, ...ag_orders(placed_on, note)')
      .eq('run', run)
      .order('name')
      .order('placed_on', { referencedTable: 'ag_orders', ascending: false });
    expect(r.error).toBeNull();
    expect(r.data).toEqual([
      { name: 'Ines', placed_on: ['2025-03-02', '2025-03-01'], note: [null, 'leave at door, "back" gate'] },
      { name: 'Joao', placed_on: ['2025-03-02'], note: [''] },
      { name: 'Kai', placed_on: [], note: [] },
    ]);
    const agg = await db.from('ag_customers').select('name, ...ag_orders(id.count())').eq('run', run);
    expect([agg.status, agg.error?.code]).toEqual([400, 'PGRST127']);
  });
});

describe('CSV', () => {
  it('header of the keys, PostgreSQL record quoting, NULL as nothing, "" for the empty string', async () => {
    const r = await db.from('ag_orders').select('placed_on, note, ag_customers(name)').eq('run', run).order('id').csv();
    expect(r.error).toBeNull();
    expect(r.data).toBe(
      [
        'placed_on,note,ag_customers',
        '2025-03-01,"leave at door, ""back"" gate","{""name"":""Ines""}"',
        '2025-03-02,,"{""name"":""Ines""}"',
        '2025-03-02,"","{""name"":""Joao""}"',
      ].join('\n'),
    );
    const raw = await restRaw(lb, `ag_orders?select=id&run=eq.nothing-${run}`, { headers: { accept: 'text/csv', prefer: 'count=exact' } });
    expect([raw.status, raw.headers.get('content-type'), raw.headers.get('content-range'), raw.text]).toEqual([200, 'text/csv; charset=utf-8', '*/0', '\n']);
  });
});

describe('execution plans and planner counts', () => {
  const planJson = 'application/vnd.pgrst.plan+json; for="application/json"';

  it('refused (406) unless pgrst.db_plan_enabled is set on the authenticator role, then EXPLAIN as the request role', async () => {
    const off = await restRaw(lb, `ag_orders?run=eq.${run}`, { headers: { accept: planJson } });
    expect([off.status, codeOfBody(off.json)]).toEqual([406, 'PGRST107']);
    await setAuthenticatorSetting(lb, 'db_plan_enabled', 'true');
    try {
      const json = await db.from('ag_orders').select('*').eq('run', run).explain({ format: 'json' });
      expect(json.error).toBeNull();
      expect(json.data).toEqual([expect.objectContaining({ Plan: expect.objectContaining({ 'Node Type': expect.any(String) }) })]);
      const text = await db.from('ag_orders').select('*').eq('run', run).explain();
      expect(text.data).toMatch(/^\w[\w ]*\s+\(cost=/);
      const analyzed = await db.from('ag_orders').select('id').eq('run', run).explain({ analyze: true, verbose: true, settings: true, format: 'json' });
      expect(analyzed.error).toBeNull();
      const plan = (analyzed.data as unknown as Array<Record<string, unknown>>)[0];
      expect(plan).toMatchObject({ 'Execution Time': expect.any(Number), Settings: expect.objectContaining({ search_path: '"public", "public", "extensions"' }) });
      const raw = await restRaw(lb, `ag_orders?select=id&run=eq.${run}`, { headers: { accept: `${planJson}; options=analyze` } });
      expect(raw.headers.get('content-type')).toBe('application/vnd.pgrst.plan+json; for="application/json"; options=analyze; charset=utf-8');
      // writes do not answer plans
      const post = await restRaw(lb, 'ag_customers', { method: 'POST', body: JSON.stringify({ run, name: 'x' }), headers: { accept: planJson } });
      expect([post.status, codeOfBody(post.json)]).toEqual([406, 'PGRST107']);
    } finally {
      await setAuthenticatorSetting(lb, 'db_plan_enabled', null);
    }
  });

  it('count=planned is the planner\'s estimate (206 when it exceeds the page), estimated is exact under max rows', async () => {
    const planned = await db.from('ag_orders').select('*', { head: true, count: 'planned' }).eq('run', run);
    expect(planned.error).toBeNull();
    expect(typeof planned.count).toBe('number');
    expect(planned.status).toBe((planned.count ?? 0) > 3 ? 206 : 200);
    const estimated = await db.from('ag_orders').select('*', { head: true, count: 'estimated' }).eq('run', run);
    expect([estimated.status, estimated.count]).toEqual([200, 3]);
  });
});
