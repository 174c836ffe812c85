import { describe, expect, it } from 'vitest';
import { createClient } from '@supabase/supabase-js';
import { RestError } from './errors.ts';
import { contentRange, negotiateRepresentation, readStatus, requestSchema, singleObjectError } from './negotiate.ts';

const h = (init: Record<string, string>) => new Headers(init);

function restError(fn: () => unknown): RestError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(RestError);
    return e as RestError;
  }
  throw new Error('expected a RestError');
}

/** A supabase-js client whose fetch records the request and answers with the given response. */
function clientAnswering(answer: () => Response, seen: Request[] = []) {
  return createClient('http://127.0.0.1:1', 'anon-key', {
    accessToken: async () => 'token',
    db: { schema: 'public' },
    global: {
      fetch: async (input: string | URL | Request, init?: RequestInit) => {
        seen.push(new Request(typeof input === 'string' || input instanceof URL ? input : input.url, init));
        return answer();
      },
    },
  });
}

describe('requestSchema', () => {
  it('uses Accept-Profile for reads, Content-Profile for writes, default the first exposed schema', () => {
    const exposed = ['public', 'api'];
    expect(requestSchema('GET', h({}), exposed)).toBe('public');
    expect(requestSchema('GET', h({ 'accept-profile': 'api' }), exposed)).toBe('api');
    expect(requestSchema('HEAD', h({ 'content-profile': 'api' }), exposed)).toBe('public');
    expect(requestSchema('POST', h({ 'content-profile': 'api', 'accept-profile': 'nope' }), exposed)).toBe('api');
    const e = restError(() => requestSchema('PATCH', h({ 'content-profile': 'auth' }), exposed));
    expect([e.status, e.code, e.message, e.hint]).toEqual([406, 'PGRST106', 'Invalid schema: auth', 'Only the following schemas are exposed: public, api']);
  });

  it('what supabase-js sends: Accept-Profile on GET, Content-Profile on POST', async () => {
    const seen: Request[] = [];
    const c = clientAnswering(() => new Response('[]', { status: 200 }), seen);
    await c.schema('api').from('t').select();
    await c.schema('api').from('t').insert({ a: 1 });
    expect(seen).toHaveLength(2);
    expect(requestSchema(seen[0]!.method, seen[0]!.headers, ['public', 'api'])).toBe('api');
    expect(requestSchema(seen[1]!.method, seen[1]!.headers, ['public', 'api'])).toBe('api');
  });
});

describe('negotiateRepresentation', () => {
  it('json by default and for */*, object for .single(), csv, stripped nulls', () => {
    expect(negotiateRepresentation(null).kind).toBe('json');
    expect(negotiateRepresentation('*/*').kind).toBe('json');
    expect(negotiateRepresentation('application/vnd.pgrst.object+json')).toMatchObject({ kind: 'object', stripNulls: false });
    expect(negotiateRepresentation('application/vnd.pgrst.object+json;nulls=stripped')).toMatchObject({ kind: 'object', stripNulls: true });
    expect(negotiateRepresentation('application/vnd.pgrst.array+json;nulls=stripped')).toMatchObject({ kind: 'json', stripNulls: true });
    expect(negotiateRepresentation('text/csv').kind).toBe('csv');
    expect(negotiateRepresentation('application/geo+json;q=1, application/json;q=0.5').kind).toBe('json');
  });

  it('nothing acceptable is 406 PGRST107', () => {
    const e = restError(() => negotiateRepresentation('application/geo+json'));
    expect([e.status, e.code]).toEqual([406, 'PGRST107']);
    expect(restError(() => negotiateRepresentation('application/json;q=0')).code).toBe('PGRST107');
  });

  it('what the client sends for .single(), .maybeSingle() and .csv()', async () => {
    const seen: Request[] = [];
    const c = clientAnswering(() => new Response('[]', { status: 200 }), seen);
    await c.from('t').select().single();
    await c.from('t').select().maybeSingle();
    await c.from('t').select().csv();
    expect(seen.map((r) => negotiateRepresentation(r.headers.get('accept')).kind)).toEqual(['object', 'json', 'csv']);
  });
});

describe('Content-Range and status', () => {
  it('formats like PostgREST', () => {
    expect(contentRange(0, 10, null)).toBe('0-9/*');
    expect(contentRange(10, 10, 57)).toBe('10-19/57');
    expect(contentRange(0, 0, null)).toBe('*/*');
    expect(contentRange(0, 0, 0)).toBe('*/0');
  });

  it('200 / 206 / 416', () => {
    expect(readStatus(0, 5, null)).toBe(200);
    expect(readStatus(0, 5, 5)).toBe(200);
    expect(readStatus(10, 10, 57)).toBe(206);
    expect(readStatus(0, 0, 0)).toBe(200);
    const e = restError(() => readStatus(10, 0, 5));
    expect(e.toJSON()).toEqual({
      code: 'PGRST103', message: 'Requested range not satisfiable', details: 'An offset of 10 was requested, but there are only 5 rows.', hint: null,
    });
    expect(e.status).toBe(416);
  });

  it('the real client reads count from our Content-Range and passes PGRST116 through', async () => {
    const page = new Response(JSON.stringify([{ id: 11 }, { id: 12 }]), {
      status: readStatus(10, 2, 57),
      headers: { 'content-type': 'application/json', 'content-range': contentRange(10, 2, 57) },
    });
    const res = await clientAnswering(() => page).from('t').select('*', { count: 'exact' }).range(10, 11);
    expect([res.status, res.count, res.data]).toEqual([206, 57, [{ id: 11 }, { id: 12 }]]);

    const err = singleObjectError(0);
    const single = await clientAnswering(() => new Response(JSON.stringify(err.toJSON()), { status: err.status, headers: { 'content-type': 'application/json' } }))
      .from('t')
      .select()
      .single();
    expect(single.status).toBe(406);
    expect(single.error).toMatchObject({ code: 'PGRST116', details: 'The result contains 0 rows', message: 'Cannot coerce the result to a single JSON object' });
  });
});
