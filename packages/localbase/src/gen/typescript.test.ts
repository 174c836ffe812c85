import { describe, expect, it } from 'vitest';
import type { GenFunction, GenRelation, Introspection, PgType } from './introspect.ts';
import { renderTypescript } from './typescript.ts';

// A hand-built catalog: the renderer's rules without a database (gen-types.test.ts runs the real thing).
let nextOid = 1000;
const types: PgType[] = [];
function type(schema: string, name: string, more: Partial<PgType> = {}): number {
  const oid = nextOid++;
  types.push({ oid, schema, name, kind: 'b', elem: 0, base: 0, relid: 0, relkind: null, ...more });
  return oid;
}
const pgc = (name: string, more: Partial<PgType> = {}) => type('pg_catalog', name, more);
const int8 = pgc('int8');
const int4 = pgc('int4');
const numeric = pgc('numeric');
const text = pgc('text');
const json = pgc('json');
const jsonb = pgc('jsonb');
const date = pgc('date');
const timestamptz = pgc('timestamptz');
const bool = pgc('bool');
const point = pgc('point');
const textArray = pgc('_text', { elem: text });
const trigger = pgc('trigger', { kind: 'p' });
const voidType = pgc('void', { kind: 'p' });
const mood = type('public', 'mood', { kind: 'e' });
const hidden = type('private', 'hidden_state', { kind: 'e' });
const moodArray = type('public', '_mood', { elem: mood });
const email = type('public', 'email', { kind: 'd', base: text });

const col = (name: string, t: number, more: Partial<GenRelation['columns'][number]> = {}) => ({
  name, num: 0, type: t, nullable: true, hasDefault: false, identity: '', generated: false, updatable: true, ...more,
});
const fn = (name: string, args: GenFunction['args'], returnType: number, more: Partial<GenFunction> = {}): GenFunction => ({
  schema: 'public', name, identityArgs: args.map((a) => a.name).join(', '), args, returnType, returnTypeName: '', returnsSet: false, rows: 0, ...more,
});
const arg = (name: string, t: number, more: Partial<GenFunction['args'][number]> = {}) => ({ name, type: t, mode: 'i', hasDefault: false, ...more });

const catalog: Introspection = {
  schemas: ['public'],
  relations: [
    {
      oid: 1, schema: 'public', name: 'entries', kind: 'r', updatable: true,
      columns: [
        col('id', int8, { nullable: false, identity: 'a' }),
        col('amount', numeric, { nullable: false }),
        col('body', jsonb),
        col('raw', json, { nullable: false, hasDefault: true }),
        col('day', date, { nullable: false }),
        col('at', timestamptz, { nullable: false, hasDefault: true }),
        col('tags', textArray),
        col('moods', moodArray),
        col('state', hidden),
        col('contact', email, { nullable: false }),
        col('where', point),
        col('done', bool, { nullable: false, generated: true }),
        col('with space', text),
      ],
    },
  ],
  foreignKeys: [],
  functions: [
    fn('pick', [arg('a', int4)], text),
    fn('pick', [arg('a', text)], text),
    fn('echo', [arg('', json)], json),
    fn('unnamed_int', [arg('', int4)], int4),
    fn('on_insert', [], trigger),
    fn('nothing', [], voidType),
    fn('maybe', [arg('n', int4, { hasDefault: true })], int4, { returnsSet: true, rows: 1000 }),
  ],
  enums: [
    { schema: 'public', name: 'mood', values: ['happy', 'sad'] },
    { schema: 'private', name: 'hidden_state', values: ['a', 'b'] },
  ],
  compositeTypes: [],
  types,
};

describe('renderTypescript', () => {
  const out = renderTypescript(catalog, { postgrestVersion: '13' });
  const section = (from: string, to: string) => out.slice(out.indexOf(from), out.indexOf(to, out.indexOf(from)));

  it('maps PostgreSQL types to TypeScript (int8 and numeric as number, json as Json, dates as string, arrays, enums)', () => {
    const row = section('Row: {', '}');
    expect(row).toContain('id: number\n');
    expect(row).toContain('amount: number\n');
    expect(row).toContain('body: Json | null\n');
    expect(row).toContain('raw: Json\n');
    expect(row).toContain('day: string\n');
    expect(row).toContain('tags: string[] | null\n');
    expect(row).toContain('moods: Database["public"]["Enums"]["mood"][] | null\n');
    // an enum of a schema that is not generated is written out; a domain is its base type; unknown stays unknown
    expect(row).toContain('state: "a" | "b" | null\n');
    expect(row).toContain('contact: string\n');
    expect(row).toContain('where: unknown\n');
    expect(row).toContain('"with space": string | null\n');
  });

  it('makes columns with a default, identity or NULL optional on insert, and never writes identity ALWAYS or generated ones', () => {
    const insert = section('Insert: {', '}');
    expect(insert).toContain('id?: never\n');
    expect(insert).toContain('done?: never\n');
    expect(insert).toContain('amount: number\n');
    expect(insert).toContain('raw?: Json\n');
    expect(insert).toContain('at?: string\n');
    expect(insert).toContain('body?: Json | null\n');
    const update = section('Update: {', '}');
    expect(update).toContain('amount?: number\n');
    expect(update).toContain('id?: never\n');
  });

  it('lists the functions PostgREST can call, overloads as a union, sets as arrays, clashing overloads as errors', () => {
    const fns = section('Functions: {', 'Enums: {');
    expect(fns).toContain('echo: { Args: { "": Json }; Returns: Json }');
    expect(fns).not.toContain('unnamed_int'); // one unnamed int argument: not callable over /rpc
    expect(fns).not.toContain('on_insert'); // triggers are left out
    expect(fns).toContain('nothing: { Args: never; Returns: undefined }');
    expect(fns).toContain('maybe: { Args: { n?: number }; Returns: number[] }');
    expect(fns).toMatch(/pick:\n\s+\| \{\n/);
    expect(fns).toContain('Could not choose the best candidate function between: public.pick(a => int4), public.pick(a => text).');
  });

  it('ends with the helpers, Constants with the enum values, and the PostgREST version marker', () => {
    expect(out).toContain('__InternalSupabase: {\n    PostgrestVersion: "13"\n  }');
    for (const helper of ['export type Tables<', 'export type TablesInsert<', 'export type TablesUpdate<', 'export type Enums<', 'export type CompositeTypes<'])
      expect(out).toContain(helper);
    expect(out).toContain('export const Constants = {\n  public: {\n    Enums: {\n      mood: ["happy", "sad"],\n    },\n  },\n} as const');
    expect(renderTypescript(catalog)).not.toContain('__InternalSupabase: {');
  });
});
