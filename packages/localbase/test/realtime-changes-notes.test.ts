// The app's migrations publish public.notes for Realtime (supabase/migrations/20261124130000_notes_realtime.sql): a
// signed-in user hears their own notes' inserts and updates and nothing of another user's; deletions reach every
// subscriber of the table with the id alone (RLS cannot be checked on a deleted row, as on Supabase).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SupabaseClient } from '@supabase/supabase-js';
import { emptySeedFile, ownDatabase, signedInClient, sleep, startTestServer, type Localbase } from './helpers.ts';
import { closeRealtimeClients, subscribe, until } from './realtime-helpers.ts';

let lb: Localbase;
let dropScratch: (() => Promise<void>) | undefined;

beforeAll(async () => {
  const own = await ownDatabase();
  dropScratch = own.drop;
  // The repository's own migrations (the default folder).
  lb = await startTestServer({ migrationsDir: undefined, seedFile: emptySeedFile, ...own.options });
});

afterAll(async () => {
  await closeRealtimeClients();
  await lb?.stop();
  await dropScratch?.();
});

/** What realtime-js hands a postgres_changes callback. */
interface Change {
  schema: string;
  table: string;
  commit_timestamp: string;
  eventType: string;
  new: Record<string, unknown>;
  old: Record<string, unknown>;
  errors: unknown;
}

/** The app's subscription: its notes' changes (filtered by owner), and deletions (which no filter on user_id matches). */
async function liveNotes(client: SupabaseClient, userId: string): Promise<Change[]> {
  const heard: Change[] = [];
  const channel = client
    .channel(`notes:${userId}`)
    .on('postgres_changes', { event: '*', schema: 'public', table: 'notes', filter: `user_id=eq.${userId}` }, (p: Change) => heard.push(p))
    .on('postgres_changes', { event: 'DELETE', schema: 'public', table: 'notes' }, (p: Change) => heard.push(p));
  expect((await subscribe(channel)).status).toBe('SUBSCRIBED');
  return heard;
}

describe('realtime: the app’s notes', () => {
  it('are published, and each user hears only their own notes’ changes', async () => {
    const { rows } = await lb.db.query(
      `select exists (select 1 from pg_publication_tables where pubname = 'supabase_realtime' and schemaname = 'public' and tablename = 'notes') as published`,
    );
    expect(rows[0]!.published).toBe(true);
    const alice = await signedInClient(lb);
    const bob = await signedInClient(lb);
    const aliceId = (await alice.client.auth.getUser()).data.user!.id;
    const bobId = (await bob.client.auth.getUser()).data.user!.id;
    const aliceHeard = await liveNotes(alice.client, aliceId);
    // bob subscribes with alice's id as the filter: RLS still keeps her notes from him.
    const bobHeard = await liveNotes(bob.client, aliceId);

    const created = await alice.client.from('notes').insert({ title: 'Groceries' }).select().single();
    expect(created.error).toBeNull();
    const id = created.data!.id as string;
    // RLS is checked against the live row when the change is dispatched (as upstream): a row already deleted by then
    // is not delivered, so each step waits for the previous one to arrive, as a person editing would.
    await until(() => aliceHeard.length === 1, 3000, 'the insert');
    expect((await alice.client.from('notes').update({ pinned: true }).eq('id', id)).error).toBeNull();
    await until(() => aliceHeard.length === 2, 3000, 'the update');
    expect((await alice.client.from('notes').delete().eq('id', id)).error).toBeNull();
    await until(() => aliceHeard.length === 3, 3000, 'the delete');
    expect(aliceHeard.map((c) => c.eventType)).toEqual(['INSERT', 'UPDATE', 'DELETE']);
    expect(aliceHeard[0]!.new).toMatchObject({ id, title: 'Groceries', user_id: aliceId, pinned: false });
    expect(aliceHeard[1]!.new).toMatchObject({ id, pinned: true });
    expect(aliceHeard[2]!.old).toEqual({ id });
    // bob's own note reaches neither channel (alice's id is the filter of both), and of alice's notes bob heard only
    // the deletion, which carries the id alone.
    await bob.client.from('notes').insert({ title: 'Bob’s' });
    await sleep(400);
    expect(bobHeard.map((c) => c.eventType)).toEqual(['DELETE']);
    expect(bobHeard[0]!.old).toEqual({ id });
    expect(bobId).not.toBe(aliceId);
  });

  it('a note at its size cap is filtered and checked against RLS by its owner and key: PostgreSQL is not handed the 20,000-character body', async () => {
    const alice = await signedInClient(lb);
    const aliceId = (await alice.client.auth.getUser()).data.user!.id;
    const heard = await liveNotes(alice.client, aliceId);
    // What the dispatcher hands PostgreSQL to filter the changes and check RLS: the parameters of its queries over the
    // changes' images.
    const checked: string[] = [];
    const db = lb.db;
    const query = db.query.bind(db);
    db.query = ((sql: string, params?: unknown[]) => {
      if (sql.includes('jsonb_populate_record')) checked.push(JSON.stringify(params ?? []));
      return query(sql, params);
    }) as typeof db.query;
    const transaction = db.transaction.bind(db);
    db.transaction = ((fn) =>
      transaction((tx) =>
        fn({
          ...tx,
          query: ((sql: string, params?: unknown[]) => {
            if (sql.includes('jsonb_populate_record')) checked.push(JSON.stringify(params ?? []));
            return tx.query(sql, params);
          }) as typeof tx.query,
        }),
      )) as typeof db.transaction;
    try {
      const body = 'b'.repeat(20_000);
      const notes = Array.from({ length: 5 }, (_, i) => ({ title: `Long ${i}`, body }));
      expect((await alice.client.from('notes').insert(notes)).error).toBeNull();
      await until(() => heard.length === 5, 5000, 'the five inserts');
      expect(heard.every((c) => c.new.body === body)).toBe(true); // delivered whole
      expect(checked.length).toBeGreaterThan(0);
      // Five owners, five ids and their JSON: far below one body.
      expect(checked.join('').length).toBeLessThan(1_000);
    } finally {
      db.query = query;
      db.transaction = transaction;
    }
  });
});
