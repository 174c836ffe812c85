// Relationships beyond plain FKs, on a real catalog (PGlite): FKs seen through views, functions of a row as
// computed relationships and computed fields, self references; and the read statements built for them.
import { describe, expect, it } from 'vitest';
import { PGlite } from '@electric-sql/pglite';
import { buildRead } from './build-read.ts';
import { RestError } from './errors.ts';
import { parseQuery } from './parse.ts';
import { resolveEmbed } from './resolve.ts';
import { buildSchemaCache, readCatalog, type SchemaCache } from './schema-cache.ts';
import { openSchemaDb } from './test-db.ts';

const SCHEMA = `
create table shelves (id int primary key, label text not null);
create table boxes (id int primary key, shelf_id int references shelves(id), note text);
create table nodes (id int primary key, name text not null, up int references nodes(id));
create view shelf_view as select id as shelf_no, label, label || '!' as loud from shelves;
create view box_view as select id, shelf_id as on_shelf, shelf_id as again, note from boxes;
create view box_view2 as select on_shelf, note from box_view;
create view box_union as select id, shelf_id from boxes union all select id, shelf_id from boxes;
create function boxes_on(s shelves) returns setof boxes language sql stable as $$ select * from boxes where shelf_id = s.id $$;
create function first_box(s shelves) returns setof boxes rows 1 language sql stable as $$ select * from boxes where shelf_id = s.id order by id limit 1 $$;
create function shelf_of(b boxes) returns shelves language sql stable as $$ select * from shelves where id = b.shelf_id $$;
create function shelves(b boxes) returns setof shelves language sql stable as $$ select * from shelves where id <> b.shelf_id $$;
create function shout(b boxes) returns text language sql immutable as $$ select upper(b.note) $$;
create function no_arg() returns setof boxes language sql stable as $$ select * from boxes $$;
insert into shelves values (1, 'top'), (2, 'bottom');
insert into boxes values (10, 1, 'tools'), (11, 1, 'cables'), (12, 2, null);
insert into nodes values (1, 'root', null), (2, 'a', 1), (3, 'b', 1);
`;

let db: PGlite;
let cache: SchemaCache;

openSchemaDb(SCHEMA, (fx) => ({ db, cache } = fx));

const resolve = (source: string, embed: string, hint: string | null = null) => resolveEmbed(cache, { schema: 'public', source, embed, hint });

async function read(table: string, qs: string): Promise<unknown[]> {
  const stmt = buildRead({ cache, schema: 'public', table, query: parseQuery(qs), offset: 0, limit: null, count: false });
  const r = await db.query<{ body: string }>(stmt.sql, stmt.params);
  return JSON.parse(r.rows[0]!.body) as unknown[];
}

function restError(fn: () => unknown): RestError {
  try {
    fn();
  } catch (e) {
    if (e instanceof RestError) return e;
    throw e;
  }
  throw new Error('expected a RestError');
}

describe('foreign keys through views', () => {
  it('a view column that is a plain table column carries its FKs (renamed, twice, through a view of a view)', () => {
    const keys = (cache.viewForeignKeys ?? []).map((k) => `${k.table}(${k.columns.join(',')})->${k.refTable}(${k.refColumns.join(',')})`).sort();
    expect(keys).toEqual([
      'box_view(again)->shelf_view(shelf_no)',
      'box_view(again)->shelves(id)',
      'box_view(on_shelf)->shelf_view(shelf_no)',
      'box_view(on_shelf)->shelves(id)',
      'box_view2(on_shelf)->shelf_view(shelf_no)',
      'box_view2(on_shelf)->shelves(id)',
      'boxes(shelf_id)->shelf_view(shelf_no)',
    ]);
    expect(resolve('box_view2', 'shelves')).toMatchObject({ cardinality: 'many-to-one', sourceColumns: ['on_shelf'], targetColumns: ['id'] });
    expect(resolve('shelf_view', 'boxes')).toMatchObject({ cardinality: 'one-to-many', sourceColumns: ['shelf_no'], targetColumns: ['shelf_id'] });
    // a view exposing the FK column twice: two relationships
    expect(restError(() => resolve('shelves', 'box_view')).code).toBe('PGRST201');
    expect(resolve('shelves', 'box_view', 'again').sourceColumns).toEqual(['id']);
  });

  it('without a snapshot of views (hand-made caches) nothing is derived', async () => {
    const snap = await readCatalog(db, ['public']);
    const bare = buildSchemaCache({ ...snap, views: undefined, rowFunctions: undefined });
    expect(bare.viewForeignKeys).toEqual([]);
    expect(restError(() => resolveEmbed(bare, { schema: 'public', source: 'box_view2', embed: 'shelves' })).code).toBe('PGRST200');
  });

  it('reads through the derived keys', async () => {
    expect(await read('shelf_view', 'select=label,box_view2(note)&shelf_no=eq.1')).toEqual([{ label: 'top', box_view2: [{ note: 'tools' }, { note: 'cables' }] }]);
  });
});

describe('computed relationships', () => {
  it('setof → to-many, rows 1 or a single composite → to-one; a function named like a table replaces those FKs', () => {
    expect(resolve('shelves', 'boxes_on')).toMatchObject({ cardinality: 'one-to-many', computed: { schema: 'public', name: 'boxes_on' }, target: { name: 'boxes' } });
    expect(resolve('shelves', 'first_box')).toMatchObject({ cardinality: 'many-to-one', computed: { name: 'first_box' } });
    expect(resolve('boxes', 'shelf_of')).toMatchObject({ cardinality: 'many-to-one', computed: { name: 'shelf_of' } });
    expect(resolve('boxes', 'shelves')).toMatchObject({ cardinality: 'one-to-many', computed: { name: 'shelves' } });
    expect(restError(() => resolve('shelves', 'no_arg')).code).toBe('PGRST200');
    expect(restError(() => resolve('boxes', 'shout')).code).toBe('PGRST200');
  });

  it('are called with the parent row, nest, and take filters', async () => {
    expect(await read('shelves', 'select=label,boxes_on(note,shelf_of(label)),first_box(id)&order=id')).toEqual([
      { label: 'top', boxes_on: [{ note: 'tools', shelf_of: { label: 'top' } }, { note: 'cables', shelf_of: { label: 'top' } }], first_box: { id: 10 } },
      { label: 'bottom', boxes_on: [{ note: null, shelf_of: { label: 'bottom' } }], first_box: { id: 12 } },
    ]);
    expect(await read('shelves', 'select=id,boxes_on!inner(id)&boxes_on.note=eq.cables')).toEqual([{ id: 1, boxes_on: [{ id: 11 }] }]);
    expect(await read('boxes', 'select=id,shelf_of(id)&order=shelf_of(label).asc,id.desc')).toEqual([
      { id: 12, shelf_of: { id: 2 } },
      { id: 11, shelf_of: { id: 1 } },
      { id: 10, shelf_of: { id: 1 } },
    ]);
  });
});

describe('computed fields', () => {
  it('select, filter and order by a function of the row; not in *', async () => {
    expect(await read('boxes', 'select=id,shout&shout=like.*OO*')).toEqual([{ id: 10, shout: 'TOOLS' }]);
    expect(await read('boxes', 'select=shout&order=shout.desc.nullslast')).toEqual([{ shout: 'TOOLS' }, { shout: 'CABLES' }, { shout: null }]);
    expect(Object.keys(((await read('boxes', 'select=*&id=eq.10')) as Array<Record<string, unknown>>)[0]!)).toEqual(['id', 'shelf_id', 'note']);
    expect(restError(() => buildRead({ cache, schema: 'public', table: 'boxes', query: parseQuery('select=nope'), offset: 0, limit: null, count: false })).code).toBe('42703');
  });
});

describe('self references', () => {
  it('table name → children, FK column → parent, FK column as hint → children, constraint as hint → PGRST200', async () => {
    expect(resolve('nodes', 'nodes')).toMatchObject({ cardinality: 'one-to-many', isSelf: true });
    expect(resolve('nodes', 'up')).toMatchObject({ cardinality: 'many-to-one', isSelf: true });
    expect(resolve('nodes', 'nodes', 'up').cardinality).toBe('one-to-many');
    expect(restError(() => resolve('nodes', 'nodes', 'nodes_up_fkey')).code).toBe('PGRST200');
    expect(await read('nodes', 'select=name,nodes(name),up(name)&order=id&id=lte.2')).toEqual([
      { name: 'root', nodes: [{ name: 'a' }, { name: 'b' }], up: null },
      { name: 'a', nodes: [], up: { name: 'root' } },
    ]);
  });
});

describe('empty and duplicate embeds', () => {
  it('an embed selecting nothing is left out; the same embed twice → 42712', async () => {
    expect(await read('boxes', 'select=id,shelves_of:shelf_of()&id=eq.10')).toEqual([{ id: 10 }]);
    const e = restError(() => buildRead({ cache, schema: 'public', table: 'nodes', query: parseQuery('select=up(id),up(name)'), offset: 0, limit: null, count: false }));
    expect([e.status, e.code, e.message]).toEqual([400, '42712', 'table name "nodes_up_1" specified more than once']);
  });
});
