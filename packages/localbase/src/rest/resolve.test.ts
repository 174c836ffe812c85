import { describe, expect, it } from 'vitest';
import { RestError } from './errors.ts';
import { buildSchemaCache, type CatalogSnapshot, type ForeignKey } from './schema-cache.ts';
import { isToOne, relationshipsFrom, resolveEmbed, type Relationship } from './resolve.ts';

// A hand-made cache (the same shape the catalog query returns).
const rel = (name: string, columns: string[], schema = 'public') => ({
  schema,
  name,
  kind: 'r',
  updatable: 28,
  columns: columns.map((c) => ({ name: c, dataType: 'bigint' })),
});
const fk = (name: string, table: string, columns: string[], refTable: string, refColumns: string[], schema = 'public'): ForeignKey => ({
  name, schema, table, columns, refSchema: 'public', refTable, refColumns,
});
const pk = (table: string, columns: string[], schema = 'public') => ({ schema, table, primary: true, columns });

const snapshot: CatalogSnapshot = {
  relations: [
    rel('profiles', ['id', 'best_friend']),
    rel('lists', ['id', 'owner_id']),
    rel('list_settings', ['list_id', 'theme']),
    rel('todos', ['id', 'list_id', 'owner_id', 'reviewer_id']),
    rel('tags', ['id', 'name']),
    rel('todo_tags', ['todo_id', 'tag_id']),
    rel('audit', ['todo_id', 'tag_id', 'at']),
    rel('orders', ['id', 'billing', 'shipping']),
    rel('addresses', ['id', 'line']),
    rel('hidden', ['id', 'todo_id'], 'other'),
  ],
  keys: [
    pk('profiles', ['id']),
    pk('lists', ['id']),
    pk('list_settings', ['list_id']),
    pk('todos', ['id']),
    pk('tags', ['id']),
    { schema: 'public', table: 'tags', primary: false, columns: ['name'] },
    pk('todo_tags', ['todo_id', 'tag_id']),
    pk('orders', ['id']),
    pk('addresses', ['id']),
  ],
  foreignKeys: [
    fk('profiles_best_friend_fkey', 'profiles', ['best_friend'], 'profiles', ['id']),
    fk('lists_owner_id_fkey', 'lists', ['owner_id'], 'profiles', ['id']),
    fk('list_settings_list_id_fkey', 'list_settings', ['list_id'], 'lists', ['id']),
    fk('todos_list_id_fkey', 'todos', ['list_id'], 'lists', ['id']),
    fk('todos_owner_id_fkey', 'todos', ['owner_id'], 'profiles', ['id']),
    fk('todos_reviewer_fkey', 'todos', ['reviewer_id'], 'profiles', ['id']),
    fk('todo_tags_todo_id_fkey', 'todo_tags', ['todo_id'], 'todos', ['id']),
    fk('todo_tags_tag_id_fkey', 'todo_tags', ['tag_id'], 'tags', ['id']),
    // no key covering both FKs: not a junction
    fk('audit_todo_id_fkey', 'audit', ['todo_id'], 'todos', ['id']),
    fk('audit_tag_id_fkey', 'audit', ['tag_id'], 'tags', ['id']),
    fk('billing', 'orders', ['billing'], 'addresses', ['id']),
    fk('shipping', 'orders', ['shipping'], 'addresses', ['id']),
    fk('hidden_todo_id_fkey', 'hidden', ['todo_id'], 'todos', ['id'], 'other'),
  ],
  functions: [],
};
const cache = buildSchemaCache(snapshot, ['public', 'other']);

const resolve = (source: string, embed: string, hint: string | null = null): Relationship =>
  resolveEmbed(cache, { schema: 'public', source, embed, hint });

function restError(fn: () => unknown): RestError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(RestError);
    return e as RestError;
  }
  throw new Error('expected a RestError');
}

describe('resolveEmbed', () => {
  it('many-to-one through an FK on the source', () => {
    const r = resolve('todos', 'lists');
    expect(r).toMatchObject({
      cardinality: 'many-to-one',
      source: { schema: 'public', name: 'todos' },
      target: { schema: 'public', name: 'lists' },
      constraint: 'todos_list_id_fkey',
      sourceColumns: ['list_id'],
      targetColumns: ['id'],
      sourceHoldsKey: true,
      junction: null,
    });
    expect(isToOne(r)).toBe(true);
  });

  it('one-to-many through an FK on the target', () => {
    const r = resolve('lists', 'todos');
    expect(r).toMatchObject({ cardinality: 'one-to-many', constraint: 'todos_list_id_fkey', sourceColumns: ['id'], targetColumns: ['list_id'] });
    expect(isToOne(r)).toBe(false);
  });

  it('one-to-one when the FK columns are unique, in both directions', () => {
    expect(resolve('lists', 'list_settings')).toMatchObject({ cardinality: 'one-to-one', sourceHoldsKey: false, targetColumns: ['list_id'] });
    expect(resolve('list_settings', 'lists')).toMatchObject({ cardinality: 'one-to-one', sourceHoldsKey: true, sourceColumns: ['list_id'] });
    expect(isToOne(resolve('lists', 'list_settings'))).toBe(true);
  });

  it('two FKs to the same table are ambiguous: 300 PGRST201 listing the candidates', () => {
    const e = restError(() => resolve('todos', 'profiles'));
    expect(e.status).toBe(300);
    expect(e.toJSON()).toEqual({
      code: 'PGRST201',
      message: "Could not embed because more than one relationship was found for 'todos' and 'profiles'",
      details: [
        { cardinality: 'many-to-one', embedding: 'todos with profiles', relationship: 'todos_owner_id_fkey using todos(owner_id) and profiles(id)' },
        { cardinality: 'many-to-one', embedding: 'todos with profiles', relationship: 'todos_reviewer_fkey using todos(reviewer_id) and profiles(id)' },
      ],
      hint: "Try changing 'profiles' to one of the following: 'profiles!todos_owner_id_fkey', 'profiles!todos_reviewer_fkey'. Find the desired relationship in the 'details' key.",
    });
  });

  it('a hint picks one: constraint name, FK column, or (for many-to-many) the junction table', () => {
    expect(resolve('todos', 'profiles', 'todos_owner_id_fkey').sourceColumns).toEqual(['owner_id']);
    expect(resolve('todos', 'profiles', 'reviewer_id').constraint).toBe('todos_reviewer_fkey');
    expect(resolve('orders', 'addresses', 'billing').sourceColumns).toEqual(['billing']);
    expect(resolve('profiles', 'todos', 'reviewer_id')).toMatchObject({ cardinality: 'one-to-many', targetColumns: ['reviewer_id'] });
    expect(resolve('todos', 'tags', 'todo_tags').cardinality).toBe('many-to-many');
  });

  it('the embed may be an FK constraint name or the FK column itself', () => {
    expect(resolve('todos', 'todos_reviewer_fkey')).toMatchObject({ target: { name: 'profiles' }, sourceColumns: ['reviewer_id'] });
    expect(resolve('todos', 'owner_id')).toMatchObject({ target: { name: 'profiles' }, constraint: 'todos_owner_id_fkey' });
    expect(resolve('orders', 'shipping')).toMatchObject({ target: { name: 'addresses' }, sourceColumns: ['shipping'] });
  });

  it('many-to-many through a junction whose key covers both FKs; a table without such a key is no junction', () => {
    const r = resolve('todos', 'tags');
    expect(r).toMatchObject({
      cardinality: 'many-to-many',
      target: { name: 'tags' },
      junction: {
        table: { schema: 'public', name: 'todo_tags' },
        sourceConstraint: 'todo_tags_todo_id_fkey',
        sourceJunctionColumns: ['todo_id'],
        sourceColumns: ['id'],
        targetConstraint: 'todo_tags_tag_id_fkey',
        targetJunctionColumns: ['tag_id'],
        targetColumns: ['id'],
      },
    });
    expect(resolve('tags', 'todos').junction?.sourceConstraint).toBe('todo_tags_tag_id_fkey');
    // the junction and the non-junction are still directly embeddable (one-to-many)
    expect(resolve('todos', 'todo_tags').cardinality).toBe('one-to-many');
    expect(resolve('todos', 'audit').cardinality).toBe('one-to-many');
  });

  it('a self reference: the table name embeds the children, the FK column the parent, a constraint hint matches nothing', () => {
    expect(resolve('profiles', 'profiles')).toMatchObject({ cardinality: 'one-to-many', isSelf: true, targetColumns: ['best_friend'] });
    expect(resolve('profiles', 'profiles', 'best_friend')).toMatchObject({ cardinality: 'one-to-many', isSelf: true });
    expect(resolve('profiles', 'best_friend')).toMatchObject({ cardinality: 'many-to-one', isSelf: true });
    const e = restError(() => resolve('profiles', 'profiles', 'profiles_best_friend_fkey'));
    expect([e.status, e.code, e.details]).toEqual([
      400,
      'PGRST200',
      "Searched for a foreign key relationship between 'profiles' and 'profiles' using the hint 'profiles_best_friend_fkey' in the schema 'public', but no matches were found.",
    ]);
  });

  it('no relationship: 400 PGRST200, with the hint and a suggestion when a name is close', () => {
    const e = restError(() => resolve('todos', 'list'));
    expect(e.status).toBe(400);
    expect(e.toJSON()).toEqual({
      code: 'PGRST200',
      message: "Could not find a relationship between 'todos' and 'list' in the schema cache",
      details: "Searched for a foreign key relationship between 'todos' and 'list' in the schema 'public', but no matches were found.",
      hint: "Perhaps you meant 'lists' instead of 'list'.",
    });
    const h = restError(() => resolve('todos', 'profiles', 'nope'));
    expect(h.code).toBe('PGRST200');
    expect(h.details).toBe(
      "Searched for a foreign key relationship between 'todos' and 'profiles' using the hint 'nope' in the schema 'public', but no matches were found.",
    );
    expect(restError(() => resolve('tags', 'addresses')).hint).toBeNull();
    expect(restError(() => resolve('nope', 'todos')).code).toBe('PGRST200');
  });

  it('relationships across schemas are not embeddable', () => {
    expect(relationshipsFrom(cache, 'public', 'todos').some((r) => r.target.name === 'hidden')).toBe(false);
    expect(restError(() => resolve('todos', 'hidden')).code).toBe('PGRST200');
    expect(() => resolveEmbed(cache, { schema: 'other', source: 'hidden', embed: 'todos' })).toThrow(RestError);
  });
});
