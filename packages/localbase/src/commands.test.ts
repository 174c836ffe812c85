import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatStatus, migrationTimestamp, newMigration } from './commands.ts';

describe('migration new', () => {
  it('names files <YYYYMMDDHHMMSS>_<name>.sql in UTC and never overwrites one', () => {
    const at = new Date(Date.UTC(2026, 0, 2, 3, 4, 5));
    expect(migrationTimestamp(at)).toBe('20260102030405');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lb-mig-'));
    try {
      const file = newMigration(path.join(dir, 'nested'), 'create_tags', at);
      expect(file).toBe(path.join(dir, 'nested', '20260102030405_create_tags.sql'));
      expect(() => newMigration(path.join(dir, 'nested'), 'create_tags', at)).toThrow(/EEXIST/);
      expect(() => newMigration(dir, 'a b')).toThrow(/letters, digits/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('status output', () => {
  const status = {
    running: true,
    detail: 'running at http://127.0.0.1:1',
    values: [
      { label: 'API URL', env: 'API_URL', value: 'http://127.0.0.1:1' },
      { label: 'GraphQL URL', env: 'GRAPHQL_URL', value: '' },
    ],
  };
  it('prints env lines like `supabase status -o env`, JSON, or aligned labels', () => {
    expect(formatStatus(status, 'env')).toBe('API_URL="http://127.0.0.1:1"\nGRAPHQL_URL=""\n');
    expect(JSON.parse(formatStatus(status, 'json'))).toEqual({ API_URL: 'http://127.0.0.1:1', GRAPHQL_URL: '' });
    expect(formatStatus(status, 'pretty')).toContain('    API URL: http://127.0.0.1:1\nGraphQL URL: (not provided)');
  });
});
