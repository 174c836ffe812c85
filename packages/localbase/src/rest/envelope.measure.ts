/**
 * One-off measurement (not a test, not the bench): how much does the per-request transaction envelope
 * (role + JWT claims, RLS on) cost on PGlite, depending on how many calls it takes?  Prints ops/s and the ratio
 * to the bare SELECT, all measured in the same run.
 *
 *   cd packages/localbase && node src/rest/envelope.measure.ts [rows=100000] [iterations=1500]
 *
 * Variants:
 *   bare SELECT            the SELECT alone as the table owner, with the policy's predicate written out
 *   bare in BEGIN/COMMIT   the same inside an explicit transaction (3 calls, no role): the cost of extra calls
 *   RLS, session role      role + claims set once for the session: the cost of RLS itself, no envelope
 *   5 calls                BEGIN / SET LOCAL ROLE / set_config(claims) / SELECT / COMMIT
 *   4 calls                BEGIN / set_config(role) + set_config(claims) in one statement / SELECT / COMMIT
 *   1 call (envelope.ts)   localbase_rest.exec via runEnveloped (role, claims, per-claim settings, read-only)
 *   handleRest (no socket) the whole /rest/v1 pipeline (parse, cache, build, envelope, Response) without JWT
 *                          verification or HTTP: what our TypeScript adds on top of the one-call envelope
 *   1 call (rest_exec)     a minimal plpgsql helper that sets role + claims with set_config(…, true) and runs the
 *                          statement with EXECUTE … USING, inside the implicit transaction of one call
 */
import { PGlite } from '@electric-sql/pglite';
import { ENVELOPE_SQL, runEnveloped } from './envelope.ts';
import { handleRest, type RestDeps } from './handler.ts';
import { loadSchemaCache } from './schema-cache.ts';

const rows = Number(process.argv[2] ?? 100_000);
const iterations = Number(process.argv[3] ?? 1500);

const db = new PGlite();
await db.exec(`
  create role authenticated nologin;
  create table items (
    id bigint generated always as identity primary key,
    owner uuid not null,
    title text not null,
    created_at timestamptz not null
  );
  create index items_owner_created on items (owner, created_at desc);
  alter table items enable row level security;
  create policy own on items for select to authenticated
    using (owner = (current_setting('request.jwt.claims', true)::json ->> 'sub')::uuid);
  grant select on items to authenticated;
  create function rest_exec(role text, claims text, sql text, params text[]) returns json
    language plpgsql as $$
    declare result json;
    begin
      perform set_config('role', role, true), set_config('request.jwt.claims', claims, true);
      execute sql into result using params;
      return result;
    end $$;
  grant execute on function rest_exec to authenticated;
`);
await db.exec(ENVELOPE_SQL);
const owner = '11111111-1111-4111-8111-111111111111';
await db.query(
  `insert into items (owner, title, created_at)
   select $1::uuid, 'item ' || g, now() - make_interval(secs => g) from generate_series(1, $2::int) g`,
  [owner, rows],
);
await db.exec('analyze items');

const restCache = await loadSchemaCache(db);
const claimsObject = { sub: owner, role: 'authenticated', aud: 'authenticated' };
const restDeps: RestDeps = { db, cache: () => restCache, authenticate: async () => ({ role: 'authenticated', claims: claimsObject }) };
const claims = JSON.stringify({ sub: owner, role: 'authenticated', aud: 'authenticated' });
const SELECT = `select coalesce(json_agg(t), '[]') as body from (
  select id, title, created_at from items order by created_at desc limit 20 offset $1::int) t`;
const SELECT_BARE = `select coalesce(json_agg(t), '[]') as body from (
  select id, title, created_at from items where owner = $2::uuid order by created_at desc limit 20 offset $1::int) t`;
const SELECT_ARRAY = `select coalesce(json_agg(t), '[]') from (
  select id, title, created_at from items order by created_at desc limit 20 offset ($1)[1]::int) t`;

let sessionRoleSet = false;
type Variant = [string, (offset: number) => Promise<number>];
const variants: Variant[] = [
  // the owner sees the same rows with the policy's predicate written out (same index, same plan)
  ['bare SELECT', async (o) => (await db.query(SELECT_BARE, [o, owner])).rows.length],
  [
    'bare in BEGIN/COMMIT',
    async (o) => {
      await db.exec('begin');
      const r = await db.query(SELECT_BARE, [o, owner]);
      await db.exec('commit');
      return r.rows.length;
    },
  ],
  [
    'RLS, session role',
    async (o) => {
      // role and claims set once for the session: the cost of RLS itself, without any envelope
      if (!sessionRoleSet) {
        await db.query(`select set_config('request.jwt.claims', $1, false)`, [claims]);
        await db.exec('set role authenticated');
        sessionRoleSet = true;
      }
      return (await db.query(SELECT, [o])).rows.length;
    },
  ],
  [
    '5 calls',
    async (o) => {
      await db.exec('begin');
      await db.exec('set local role authenticated');
      await db.query(`select set_config('request.jwt.claims', $1, true)`, [claims]);
      const r = await db.query(SELECT, [o]);
      await db.exec('commit');
      return r.rows.length;
    },
  ],
  [
    '4 calls',
    async (o) => {
      await db.exec('begin');
      await db.query(`select set_config('role', $1, true), set_config('request.jwt.claims', $2, true)`, ['authenticated', claims]);
      const r = await db.query(SELECT, [o]);
      await db.exec('commit');
      return r.rows.length;
    },
  ],
  [
    '1 call (envelope.ts)',
    async (o) => {
      const row = await runEnveloped<{ body: unknown[] }>(
        db,
        { role: 'authenticated', claims: JSON.parse(claims) as Record<string, unknown>, readOnly: true, method: 'GET', path: '/rest/v1/items' },
        { sql: SELECT_ARRAY.replace('coalesce(json_agg(t), \'[]\')', "coalesce(json_agg(t), '[]') as body"), params: [String(o)] },
      );
      return row?.body.length ?? 0;
    },
  ],
  [
    'handleRest (no socket)',
    async (o) => {
      const res = await handleRest(new Request(`http://x/rest/v1/items?select=id,title,created_at&order=created_at.desc&limit=20&offset=${o}`), restDeps);
      return ((await res.json()) as unknown[]).length;
    },
  ],
  [
    '1 call (rest_exec)',
    async (o) => (await db.query(`select rest_exec($1, $2, $3, $4::text[]) as body`, ['authenticated', claims, SELECT_ARRAY, [String(o)]])).rows.length,
  ],
];

// sanity: the enveloped variants see the rows through RLS (and another sub sees none)
const check = await db.query<{ body: unknown[] }>(`select rest_exec($1, $2, $3, $4::text[]) as body`, ['authenticated', claims, SELECT_ARRAY, ['0']]);
const other = await db.query<{ body: unknown[] }>(`select rest_exec($1, $2, $3, $4::text[]) as body`, [
  'authenticated', JSON.stringify({ sub: '22222222-2222-4222-8222-222222222222' }), SELECT_ARRAY, ['0'],
]);
console.log(`rows=${rows} iterations=${iterations}; RLS check: owner sees ${check.rows[0]!.body.length}, other sees ${other.rows[0]!.body.length}`);

// Interleaved: every round runs each variant for a slice, so load changes on a shared machine hit all alike.
const resetSession = async () => {
  if (sessionRoleSet) {
    await db.exec('reset role');
    sessionRoleSet = false;
  }
};
for (const [, run] of variants) {
  for (let i = 0; i < 100; i++) await run(i * 20); // warm-up
  await resetSession();
}
const slice = 50;
const elapsed = variants.map(() => 0);
let done = 0;
for (let round = 0; done < iterations; round++, done += slice) {
  for (let v = 0; v < variants.length; v++) {
    const run = variants[v]![1];
    const start = performance.now();
    for (let i = 0; i < slice; i++) await run(((round * slice + i) % 50) * 20);
    elapsed[v]! += performance.now() - start;
    await resetSession();
  }
}
const results: Array<[string, number]> = variants.map(([name], v) => [name, done / (elapsed[v]! / 1000)]);
const base = results[0]![1];
for (const [name, ops] of results) console.log(`${name.padEnd(22)} ${ops.toFixed(0).padStart(7)} ops/s   ${(base / ops).toFixed(2)}x bare`);
await db.close();
