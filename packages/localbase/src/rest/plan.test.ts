import { describe, expect, it } from 'vitest';
import { explainStatement, planContentType, planMediaType, requestSearchPath } from './plan.ts';

describe('plan media type', () => {
  it('reads format, for= and the known options (others ignored); anything else is not a plan', () => {
    expect(planMediaType('application/vnd.pgrst.plan+json; for="application/json"; options=analyze|verbose|nonsense;')).toEqual({
      format: 'json', for: 'application/json', options: ['analyze', 'verbose'],
    });
    expect(planMediaType('application/vnd.pgrst.plan')).toEqual({ format: 'text', for: 'application/json', options: [] });
    expect(planMediaType('application/vnd.pgrst.plan+text; for="text/csv"')?.for).toBe('text/csv');
    expect(planMediaType('application/json')).toBeNull();
    expect(planMediaType(null)).toBeNull();
  });

  it('answers with the content type PostgREST sends and builds EXPLAIN from the closed option list', () => {
    const plan = { format: 'json' as const, for: 'application/json', options: ['analyze' as const, 'wal' as const] };
    expect(planContentType(plan)).toBe('application/vnd.pgrst.plan+json; for="application/json"; options=analyze|wal; charset=utf-8');
    expect(explainStatement(plan, { sql: 'SELECT 1', params: ['x'] })).toEqual({ sql: 'EXPLAIN (FORMAT JSON, ANALYZE, WAL) SELECT 1', params: ['x'] });
    expect(requestSearchPath('we"ird')).toBe('"we""ird", "public", "extensions"');
  });
});
