// Realtime postgres changes (decision 042): bindings of a join become subscriptions on the tables of the
// `supabase_realtime` publication; the dispatcher reads the outbox the capture trigger fills
// (localbase.realtime_changes, see db/bootstrap.sql), woken by NOTIFY, only rows of finished transactions, and sends
// each change to the subscribers allowed to see it — RLS checked per subscriber group (role + claims) against the live
// row, as Supabase Realtime's apply_rls does.
import type { Database, Queryable } from '../db/types.ts';
import { hasNotifications } from '../db/types.ts';
import { rolledBack } from './authorization.ts';
import { BindingError, describeBinding, parseBinding, SQL_OPERATOR, type Action, type BindingParams, type Filter } from './filters.ts';
import { stringifyJson } from './protocol.ts';
import type { Claims } from './tokens.ts';

export const PUBLICATION = 'supabase_realtime';
export const NOTIFY_CHANNEL = 'localbase_realtime';
/** Most outbox rows read at once. */
const BATCH = 500;

/** A channel with postgres bindings, as the dispatcher sees it. */
export interface ChangeSubscriber {
  /** The claims the channel acts with now (a token refresh replaces them: the subscriber is re-grouped). */
  readonly claims: Claims;
  /** Sends a `postgres_changes` message to the channel: `{ ids, data }`, data given as its JSON text. */
  pushChange(ids: number[], dataJson: string): void;
}

type ChangeType = 'INSERT' | 'UPDATE' | 'DELETE';

interface Subscription {
  subscriber: ChangeSubscriber;
  /** The binding id of the join reply. */
  id: number;
  action: Action;
  filters: Filter[];
  /** JSON of the filters: subscriptions with the same filters on a table are evaluated once. */
  filterKey: string;
}

/** The subscriptions a join asked for, checked; handed to `add` once the channel is registered. */
export interface PreparedSubscriptions {
  /** Table key ("schema"."table") → the subscriptions of the binding on it. */
  byTable: Map<string, Omit<Subscription, 'subscriber'>[]>;
}

type ChangeRow = {
  id: string;
  xid: string;
  schema_name: string;
  table_name: string;
  type: ChangeType;
  record: Record<string, unknown> | null;
  old_record: Record<string, unknown> | null;
  /** Sizes of the images as JSON text (jsonb's), for upstream's 1 MiB rule. */
  record_bytes: number | null;
  old_bytes: number | null;
  commit_timestamp: string;
};

/**
 * Upstream's `max_record_bytes` (realtime.apply_rls): a change larger than this as JSON text is sent with the values
 * of at most 64 bytes only, and `errors: ["Error 413: Payload Too Large"]`.
 */
export const MAX_RECORD_BYTES = 1024 * 1024;
const OVERSIZE_VALUE_BYTES = 64;

interface ColumnMeta {
  name: string;
  /** pg_type.typname (what realtime-js converts values by). */
  type: string;
  /** format_type(): the type to cast filter values to. */
  sqlType: string;
  /** role → may select this column. */
  select: Record<string, boolean>;
}

interface TableMeta {
  qualified: string;
  rls: boolean;
  /** pg_class.relreplident: d (primary key), f (full), n (nothing), i (an index — treated as the primary key). */
  replicaIdentity: string;
  pk: string[];
  columns: ColumnMeta[];
}

const tableKey = (schema: string, table: string): string => `${quoteIdent(schema)}.${quoteIdent(table)}`;
const quoteIdent = (name: string): string => `"${name.replaceAll('"', '""')}"`;
const groupKey = (claims: Claims): string => `${claims.role}\0${JSON.stringify(claims)}`;

/** SQLSTATE → condition name, for upstream's `ERROR 22P02 (invalid_text_representation) …` exception texts. */
const CONDITIONS: Record<string, string> = {
  '22P02': 'invalid_text_representation',
  '22007': 'invalid_datetime_format',
  '22008': 'datetime_field_overflow',
  '22003': 'numeric_value_out_of_range',
  '22001': 'string_data_right_truncation',
  '42704': 'undefined_object',
  P0001: 'raise_exception',
};

/** The image with only `columns` (those it has). */
function onlyColumns(image: Record<string, unknown>, columns: ReadonlySet<string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const column of columns) if (column in image) out[column] = image[column];
  return out;
}

class SubscribeError extends Error {}

/** Timers never keep the process alive (typed loosely: the web app type-checks this file with DOM types). */
const unref = (t: unknown): void => (t as { unref?: () => void } | undefined)?.unref?.();

function pgErrorText(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown };
  const code = typeof e.code === 'string' ? e.code : 'XX000';
  const name = CONDITIONS[code];
  return `ERROR ${code}${name ? ` (${name})` : ''} ${typeof e.message === 'string' ? e.message : String(err)}`;
}

export interface ChangesOptions {
  /** How long delivered outbox rows are kept (ms): 0 with PGlite (one server), a minute on a shared PostgreSQL. */
  retentionMs?: number;
  quiet?: boolean;
}

export class PostgresChanges {
  readonly #db: Database;
  readonly #retentionMs: number;
  readonly #quiet: boolean;
  /** Table key → subscriptions on it. */
  readonly #byTable = new Map<string, Set<Subscription>>();
  /** Subscriber → its subscriptions. */
  readonly #bySubscriber = new Map<ChangeSubscriber, Subscription[]>();
  /** Last outbox row handled: (xid, id); rows below are delivered or were before any subscriber. */
  #cursor: { xid: bigint; id: bigint } | undefined;
  #preparing = 0;
  /** True when no subscriber kept the cursor moving: the first new one starts it at the present. */
  #stale = true;
  #resetting: Promise<void> | undefined;
  #running: Promise<void> | undefined;
  #again = false;
  #repoll: ReturnType<typeof setTimeout> | undefined;
  #repollMs = 10;
  #gcTimer: ReturnType<typeof setTimeout> | undefined;
  #unlisten: (() => Promise<void>) | undefined;
  #closed = false;

  constructor(db: Database, opts: ChangesOptions = {}) {
    this.#db = db;
    this.#retentionMs = opts.retentionMs ?? (db.kind === 'pg' ? 60_000 : 0);
    this.#quiet = opts.quiet ?? false;
  }

  /** Starts listening for the capture trigger's NOTIFY. */
  async start(): Promise<void> {
    if (!hasNotifications(this.#db)) throw new Error('realtime postgres changes need a database that supports LISTEN');
    this.#unlisten = await this.#db.listen(NOTIFY_CHANNEL, () => this.wake());
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#repoll);
    clearTimeout(this.#gcTimer);
    await this.#unlisten?.();
    await this.#running?.catch(() => {});
  }

  /** Re-creates the capture triggers from the publication (after migrations and `db reset`). */
  static async sync(db: Queryable): Promise<void> {
    await db.query('select localbase.realtime_sync()');
  }

  /**
   * Checks a join's bindings as upstream creates subscriptions: each must match at least one table of the
   * publication, and its filters must name columns the role may select, with values of the column's type. Any
   * failure fails them all, with upstream's message (sent as a `system` error; the join itself succeeds).
   */
  async prepare(bindings: Record<string, unknown>[], claims: Claims): Promise<PreparedSubscriptions | { error: string }> {
    this.#preparing++;
    try {
      // Subscriptions see what commits from now on (nothing was delivered while there was no subscriber).
      if (this.#stale)
        await (this.#resetting ??= this.#xmin(this.#db)
          .then((xid) => {
            this.#cursor = { xid, id: 0n };
            this.#stale = false;
          })
          .finally(() => (this.#resetting = undefined)));
      const byTable = new Map<string, Omit<Subscription, 'subscriber'>[]>();
      for (const [i, binding] of bindings.entries()) {
        let params: BindingParams;
        try {
          params = parseBinding(binding);
        } catch (err) {
          if (err instanceof BindingError) return { error: err.message };
          throw err;
        }
        let tables: { rows: { schemaname: string; tablename: string }[] };
        try {
          // a name PostgreSQL refuses (a NUL in it) fails here: upstream's exception message, not a closed socket
          tables = await this.#db.query<{ schemaname: string; tablename: string }>(
            `select schemaname, tablename from pg_catalog.pg_publication_tables
              where pubname = $1
                and schemaname like (case $2 when '*' then '%' else $2 end) escape ''
                and tablename like (case $3 when '*' then '%' else $3 end) escape ''`,
            [PUBLICATION, params.schema, params.table],
          );
          if (tables.rows.length === 0)
            return {
              error: `Unable to subscribe to changes with given parameters. Please check Realtime is enabled for the given connect parameters: [${describeBinding(params)}]`,
            };
          for (const t of tables.rows) await this.#checkFilters(t.schemaname, t.tablename, params.filters, claims.role);
        } catch (err) {
          const text = err instanceof SubscribeError ? `ERROR P0001 (raise_exception) ${err.message}` : pgErrorText(err);
          return {
            error: `Unable to subscribe to changes with given parameters. An exception happened so please check your connect parameters: [${describeBinding(params)}]. Exception: ${text}`,
          };
        }
        for (const t of tables.rows) {
          const key = tableKey(t.schemaname, t.tablename);
          let list = byTable.get(key);
          if (!list) byTable.set(key, (list = []));
          list.push({ id: i + 1, action: params.action, filters: params.filters, filterKey: JSON.stringify(params.filters) });
        }
      }
      return { byTable };
    } finally {
      this.#preparing--;
    }
  }

  async #checkFilters(schema: string, table: string, filters: Filter[], role: string): Promise<void> {
    for (const f of filters) {
      const col = await this.#db.query<{ type: string; allowed: boolean }>(
        `select format_type(a.atttypid, a.atttypmod) as type,
                coalesce(pg_catalog.has_column_privilege(r.oid, a.attrelid, a.attnum, 'SELECT'), false) as allowed
           from pg_catalog.pg_attribute a
           left join pg_catalog.pg_roles r on r.rolname = $4
          where a.attrelid = format('%I.%I', $1::text, $2::text)::regclass and a.attname = $3 and a.attnum > 0 and not a.attisdropped`,
        [schema, table, f.column, role],
      );
      const c = col.rows[0];
      if (!c || !c.allowed) throw new SubscribeError(`invalid column for filter ${f.column}`);
      if (f.op === 'in') {
        const n = await this.#db.query<{ n: number | null }>(`select cardinality($1::${c.type}[]) as n`, [f.value]);
        if ((n.rows[0]?.n ?? 0) > 100) throw new SubscribeError('too many values for `in` filter. Maximum 100');
      } else await this.#db.query(`select $1::${c.type}`, [f.value]);
    }
  }

  /** Registers a channel's prepared subscriptions (replacing any it had). */
  add(subscriber: ChangeSubscriber, prepared: PreparedSubscriptions): void {
    this.remove(subscriber);
    const all: Subscription[] = [];
    for (const [key, list] of prepared.byTable) {
      let set = this.#byTable.get(key);
      if (!set) this.#byTable.set(key, (set = new Set()));
      for (const s of list) {
        const sub = { ...s, subscriber };
        set.add(sub);
        all.push(sub);
      }
    }
    if (all.length > 0) this.#bySubscriber.set(subscriber, all);
  }

  /** The channel hears nothing more (left, closed, shut down). */
  remove(subscriber: ChangeSubscriber): void {
    const subs = this.#bySubscriber.get(subscriber);
    if (!subs) return;
    this.#bySubscriber.delete(subscriber);
    for (const [key, set] of this.#byTable) {
      for (const s of subs) set.delete(s);
      if (set.size === 0) this.#byTable.delete(key);
    }
  }

  /** How many channels have postgres subscriptions (tests, status). */
  get subscriberCount(): number {
    return this.#bySubscriber.size;
  }

  /** A NOTIFY (or a re-poll): read the outbox unless a read is running, then once more after it. */
  wake(): void {
    if (this.#closed) return;
    this.#scheduleGc();
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = this.#drain()
      .catch((err: unknown) => {
        if (!this.#closed) console.error('[localbase] realtime: delivering postgres changes failed:', err);
      })
      .finally(() => {
        this.#running = undefined;
        if (this.#again) this.wake();
      });
  }

  async #xmin(db: Queryable): Promise<bigint> {
    const r = await db.query<{ xmin: string }>('select pg_snapshot_xmin(pg_current_snapshot())::text as xmin');
    return BigInt(r.rows[0]!.xmin);
  }

  async #drain(): Promise<void> {
    do {
      this.#again = false;
      if (this.#closed) return;
      if (this.#bySubscriber.size === 0 && this.#preparing === 0) {
        this.#stale = true;
        return;
      }
      const cursor = this.#cursor;
      if (!cursor || this.#stale) return;
      // Every transaction below xmin has finished: its rows are all visible now, or rolled back and gone. One
      // statement (one snapshot): xmin, whether committed rows wait above it, and the batch (none: one row of nulls).
      const { rows: read } = await this.#db.query<ChangeRow & { xmin: string; pending: boolean }>(
        `with s as (select pg_snapshot_xmin(pg_current_snapshot()) as xmin),
              b as (select c.id, c.xid, c.schema_name, c.table_name, c.type, c.record, c.old_record, c.created_at
                      from localbase.realtime_changes c, s
                     where (c.xid, c.id) > ($1::text::xid8, $2::bigint) and c.xid < s.xmin
                     order by c.xid, c.id
                     limit ${BATCH})
         select s.xmin::text as xmin, exists (select 1 from localbase.realtime_changes p where p.xid >= s.xmin) as pending,
                b.id::text as id, b.xid::text as xid, b.schema_name, b.table_name, b.type, b.record, b.old_record,
                octet_length(b.record::text) as record_bytes, octet_length(b.old_record::text) as old_bytes,
                to_char(b.created_at at time zone 'utc', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as commit_timestamp
           from s left join b on true
          order by b.xid, b.id`,
        [cursor.xid.toString(), cursor.id.toString()],
      );
      const xmin = BigInt(read[0]!.xmin);
      const pending = read[0]!.pending;
      const rows: ChangeRow[] = read.filter((r) => r.id !== null);
      if (this.#cursor !== cursor) {
        this.#again = true; // reset by a first subscription meanwhile: read again from there
        continue;
      }
      const last = rows.at(-1);
      if (rows.length === BATCH && last) {
        this.#cursor = { xid: BigInt(last.xid), id: BigInt(last.id) };
        this.#again = true;
      } else this.#cursor = { xid: xmin > cursor.xid ? xmin : cursor.xid, id: xmin > cursor.xid ? 0n : cursor.id };
      if (rows.length > 0) await this.#deliver(rows);
      // Committed rows behind a transaction still running (they are visible, but above xmin): look again soon, as
      // the transaction holding xmin back may send no NOTIFY when it ends.
      clearTimeout(this.#repoll);
      if (pending) {
        this.#repoll = setTimeout(() => this.wake(), this.#repollMs);
        unref(this.#repoll);
        this.#repollMs = Math.min(this.#repollMs * 2, 500);
      } else this.#repollMs = 10;
    } while (this.#again);
  }

  #scheduleGc(): void {
    if (this.#gcTimer || this.#closed) return;
    this.#gcTimer = setTimeout(
      () => {
        this.#gcTimer = undefined;
        const upTo = this.#bySubscriber.size > 0 || this.#preparing > 0 ? this.#cursor?.xid : undefined;
        this.#db
          .query(
            `delete from localbase.realtime_changes
              where xid < pg_snapshot_xmin(pg_current_snapshot()) and ($1::text is null or xid < $1::text::xid8)
                and created_at < clock_timestamp() - $2 * interval '1 millisecond'`,
            [upTo?.toString() ?? null, this.#retentionMs],
          )
          .catch((err: unknown) => {
            if (!this.#closed && !this.#quiet) console.error('[localbase] realtime: clearing delivered changes failed:', err);
          });
      },
      this.#retentionMs > 0 ? 10_000 : 1_000,
    );
    unref(this.#gcTimer);
  }

  /** Sends a batch of changes (in order) to the subscriptions that match and may see them. */
  async #deliver(rows: ChangeRow[]): Promise<void> {
    // Which subscriptions each change concerns (table and action).
    const work: { row: ChangeRow; subs: Subscription[] }[] = [];
    for (const row of rows) {
      const set = this.#byTable.get(tableKey(row.schema_name, row.table_name));
      if (!set) continue;
      const subs = [...set].filter((s) => s.action === '*' || s.action === row.type);
      if (subs.length > 0) work.push({ row, subs });
    }
    if (work.length === 0) return;
    const roles = [...new Set(work.flatMap((w) => w.subs.map((s) => s.subscriber.claims.role)))];
    const metas = await this.#tableMeta([...new Set(work.map((w) => tableKey(w.row.schema_name, w.row.table_name)))], roles);

    // Filters, evaluated by PostgreSQL on the change's image (new row; for DELETE its replica identity).
    const passes = await this.#evaluateFilters(work, metas);

    // Per subscriber group: which changes it may see (RLS against the live row, as the group's role and claims).
    const groups = new Map<string, { claims: Claims; subs: Subscription[] }>();
    for (const w of work)
      for (const s of w.subs) {
        const key = groupKey(s.subscriber.claims);
        let g = groups.get(key);
        if (!g) groups.set(key, (g = { claims: s.subscriber.claims, subs: [] }));
        g.subs.push(s);
      }
    // Only changes that pass one of the group's filters are checked (a filter on user_id spares the other users').
    const visible = new Map<string, Set<number>>(); // group key → indexes into work
    for (const [key, g] of groups) {
      const mine = new Set(g.subs);
      const candidates = new Set<number>();
      for (const [i, w] of work.entries()) if (w.subs.some((s) => mine.has(s) && passes.get(i)?.has(s.filterKey))) candidates.add(i);
      if (candidates.size > 0) visible.set(key, await this.#visibleTo(g.claims, work, metas, candidates));
    }

    for (const [i, { row, subs }] of work.entries()) {
      const meta = metas.get(tableKey(row.schema_name, row.table_name));
      if (!meta) continue; // the table is gone
      // One payload per group, then one message per channel listing its matching binding ids.
      const perChannel = new Map<ChangeSubscriber, { ids: number[]; data: Record<string, unknown> }>();
      const dataByGroup = new Map<string, Record<string, unknown>>();
      for (const s of subs) {
        const claims = s.subscriber.claims;
        const key = groupKey(claims);
        if (!this.#bySubscriber.has(s.subscriber) || !groups.has(key)) continue; // left, or re-grouped meanwhile
        const error = this.#errorFor(row.type, meta, claims.role);
        if (!error) {
          if (!passes.get(i)?.has(s.filterKey)) continue;
          if (!visible.get(key)?.has(i)) continue;
        }
        let data = dataByGroup.get(key);
        if (!data) dataByGroup.set(key, (data = this.#payload(row, meta, claims.role, error)));
        const entry = perChannel.get(s.subscriber);
        if (entry) {
          if (!entry.ids.includes(s.id)) entry.ids.push(s.id);
        } else perChannel.set(s.subscriber, { ids: [s.id], data });
      }
      // Each group's payload is written as JSON once, whatever the number of its channels (a note's 20,000 characters
      // were serialised again for every tab).
      const jsonOf = new Map<Record<string, unknown>, string>();
      for (const [subscriber, { ids, data }] of perChannel) {
        let json = jsonOf.get(data);
        if (json === undefined) jsonOf.set(data, (json = stringifyJson(data)));
        subscriber.pushChange(ids, json);
      }
    }
  }

  /** Upstream's per-role errors for INSERT/UPDATE: a table without primary key, or a key the role may not select. */
  #errorFor(type: ChangeType, meta: TableMeta, role: string): string | undefined {
    if (type === 'DELETE') return undefined;
    if (meta.pk.length === 0) return 'Error 400: Bad Request, no primary key';
    const cols = new Map(meta.columns.map((c) => [c.name, c]));
    if (!meta.pk.every((k) => cols.get(k)?.select[role])) return 'Error 401: Unauthorized';
    return undefined;
  }

  /** The replica identity image of the old row: the primary key, or every column with REPLICA IDENTITY FULL. */
  #identity(meta: TableMeta, old: Record<string, unknown> | null): Record<string, unknown> {
    if (!old) return {};
    if (meta.replicaIdentity === 'f') return old;
    if (meta.replicaIdentity === 'n') return {};
    return Object.fromEntries(meta.pk.filter((k) => k in old).map((k) => [k, old[k]]));
  }

  #payload(row: ChangeRow, meta: TableMeta, role: string, error: string | undefined): Record<string, unknown> {
    const base = { schema: row.schema_name, table: row.table_name, type: row.type };
    if (error) {
      const data: Record<string, unknown> = { ...base, columns: null, commit_timestamp: null, errors: [error] };
      if (row.type !== 'DELETE') data.record = null;
      if (row.type !== 'INSERT') data.old_record = null;
      return data;
    }
    const selectable = meta.columns.filter((c) => c.select[role]);
    const allowed = new Set(selectable.map((c) => c.name));
    // The change's size as upstream counts it: the new row and the old row's replica identity (the primary key
    // unless REPLICA IDENTITY FULL).
    const oversize = (row.record_bytes ?? 0) + (meta.replicaIdentity === 'f' ? (row.old_bytes ?? 0) : 0) > MAX_RECORD_BYTES;
    const small = (v: unknown): boolean => Buffer.byteLength(stringifyJson(v) ?? 'null') <= OVERSIZE_VALUE_BYTES;
    const pick = (image: Record<string, unknown> | null, keep: (k: string) => boolean) => {
      const entries = Object.entries(image ?? {}).filter(([k, v]) => keep(k) && (!oversize || small(v)));
      return entries.length > 0 ? Object.fromEntries(entries) : null;
    };
    const data: Record<string, unknown> = {
      ...base,
      commit_timestamp: row.commit_timestamp,
      columns: selectable.map((c) => ({ name: c.name, type: c.type })),
      errors: oversize ? ['Error 413: Payload Too Large'] : null,
    };
    if (row.type !== 'DELETE') data.record = pick(row.record, (k) => allowed.has(k));
    if (row.type === 'UPDATE') data.old_record = pick(this.#identity(meta, row.old_record), (k) => allowed.has(k));
    if (row.type === 'DELETE')
      // RLS cannot be checked on a deleted row: with RLS on, only the primary key leaves (upstream's rule).
      data.old_record = pick(this.#identity(meta, row.old_record), (k) => allowed.has(k) && (!meta.rls || meta.pk.includes(k)));
    return data;
  }

  async #tableMeta(keys: string[], roles: string[]): Promise<Map<string, TableMeta>> {
    const { rows } = await this.#db.query<{ key: string; rls: boolean; replident: string; pk: string[] | null; columns: ColumnMeta[] | null }>(
      `select k.key, c.relrowsecurity as rls, c.relreplident::text as replident,
              (select array_agg(a.attname::text order by array_position(i.indkey::int2[], a.attnum))
                 from pg_catalog.pg_index i join pg_catalog.pg_attribute a on a.attrelid = i.indrelid and a.attnum = any(i.indkey::int2[])
                where i.indrelid = c.oid and i.indisprimary) as pk,
              (select jsonb_agg(jsonb_build_object(
                        'name', a.attname, 'type', t.typname, 'sqlType', format_type(a.atttypid, a.atttypmod),
                        'select', (select coalesce(jsonb_object_agg(r.rolname, pg_catalog.has_column_privilege(r.oid, c.oid, a.attnum, 'SELECT')), '{}')
                                     from pg_catalog.pg_roles r where r.rolname = any($2::text[])))
                        order by a.attnum)
                 from pg_catalog.pg_attribute a join pg_catalog.pg_type t on t.oid = a.atttypid
                where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped) as columns
         from unnest($1::text[]) as k(key)
         join pg_catalog.pg_class c on c.oid = to_regclass(k.key)`,
      [keys, roles],
    );
    const out = new Map<string, TableMeta>();
    for (const r of rows)
      out.set(r.key, { qualified: r.key, rls: r.rls, replicaIdentity: r.replident, pk: r.pk ?? [], columns: r.columns ?? [] });
    return out;
  }

  /** work index → the filter keys (JSON of a filter list) that change passes. */
  async #evaluateFilters(
    work: { row: ChangeRow; subs: Subscription[] }[],
    metas: Map<string, TableMeta>,
  ): Promise<Map<number, Set<string>>> {
    const out = new Map<number, Set<string>>();
    const byTable = new Map<string, number[]>();
    for (const [i, w] of work.entries()) {
      const key = tableKey(w.row.schema_name, w.row.table_name);
      let list = byTable.get(key);
      if (!list) byTable.set(key, (list = []));
      list.push(i);
    }
    for (const [key, indexes] of byTable) {
      const meta = metas.get(key);
      if (!meta) continue;
      const types = new Map(meta.columns.map((c) => [c.name, c.sqlType]));
      const filterSets = new Map<string, Filter[]>();
      for (const i of indexes) for (const s of work[i]!.subs) filterSets.set(s.filterKey, s.filters);
      const params: unknown[] = [];
      const exprs: string[] = [];
      const keys: string[] = [];
      for (const [fk, filters] of filterSets) {
        if (filters.length === 0) {
          for (const i of indexes) {
            let set = out.get(i);
            if (!set) out.set(i, (set = new Set()));
            set.add(fk);
          }
          continue;
        }
        // A filter on a column the table no longer has never matches.
        if (filters.some((f) => !types.has(f.column))) continue;
        const parts = filters.map((f) => {
          params.push(f.value);
          const type = types.get(f.column)!;
          const cmp = `r.${quoteIdent(f.column)} ${SQL_OPERATOR[f.op]} ${f.op === 'in' ? `($${params.length + 1}::${type}[])` : `$${params.length + 1}::${type}`}`;
          return `coalesce(${f.negate ? `not (${cmp})` : `(${cmp})`}, false)`;
        });
        keys.push(fk);
        exprs.push(`(${parts.join(' and ')}) as f${keys.length - 1}`);
      }
      if (exprs.length === 0) continue;
      // DELETE is filtered on the old row's replica identity: a filter on another column does not match it. Only the
      // filtered columns go to PostgreSQL (a row's other values, a 20,000-character text, are not read by a filter).
      const filtered = new Set([...filterSets.values()].flatMap((filters) => filters.map((f) => f.column)));
      const images = indexes.map((i) => {
        const { row } = work[i]!;
        return onlyColumns(row.type === 'DELETE' ? this.#identity(meta, row.old_record) : (row.record ?? {}), filtered);
      });
      try {
        const { rows } = await this.#db.query<Record<string, boolean | number>>(
          `select c.ord::int as ord, ${exprs.join(', ')}
             from jsonb_array_elements($1::jsonb) with ordinality as c(rec, ord)
             cross join lateral jsonb_populate_record(null::${meta.qualified}, c.rec) as r`,
          [JSON.stringify(images), ...params],
        );
        for (const r of rows) {
          const i = indexes[(r.ord as number) - 1]!;
          let set = out.get(i);
          if (!set) out.set(i, (set = new Set()));
          keys.forEach((fk, k) => {
            if (r[`f${k}`] === true) set.add(fk);
          });
        }
      } catch (err) {
        // A column's type changed since the subscription was checked: those filters match nothing (fail closed).
        if (!this.#quiet) console.error('[localbase] realtime: evaluating postgres changes filters failed:', err);
      }
    }
    return out;
  }

  /** Of the candidates (work indexes), those the group may see: no RLS or a DELETE → yes; else the live row as the group. */
  async #visibleTo(
    claims: Claims,
    work: { row: ChangeRow; subs: Subscription[] }[],
    metas: Map<string, TableMeta>,
    candidates: Set<number>,
  ): Promise<Set<number>> {
    const out = new Set<number>();
    const toCheck = new Map<string, number[]>();
    for (const [i, w] of work.entries()) {
      if (!candidates.has(i)) continue;
      const key = tableKey(w.row.schema_name, w.row.table_name);
      const meta = metas.get(key);
      if (!meta) continue;
      if (!meta.rls || w.row.type === 'DELETE') out.add(i);
      else if (!this.#errorFor(w.row.type, meta, claims.role)) {
        let list = toCheck.get(key);
        if (!list) toCheck.set(key, (list = []));
        list.push(i);
      }
    }
    if (toCheck.size === 0) return out;
    try {
      await rolledBack(this.#db, async (tx) => {
        await tx.query(
          `select set_config('role', $1, true), set_config('request.jwt.claims', $2, true),
                  set_config('request.jwt.claim.role', $1, true), set_config('request.jwt.claim.sub', $3, true)`,
          [claims.role, JSON.stringify(claims), typeof claims.sub === 'string' ? claims.sub : ''],
        );
        for (const [key, indexes] of toCheck) {
          const meta = metas.get(key)!;
          const match = meta.pk.map((k) => `t.${quoteIdent(k)} = r.${quoteIdent(k)}`).join(' and ');
          const { rows } = await tx.query<{ ord: number }>(
            `select c.ord::int as ord
               from jsonb_array_elements($1::jsonb) with ordinality as c(rec, ord)
               cross join lateral jsonb_populate_record(null::${meta.qualified}, c.rec) as r
              where exists (select 1 from ${meta.qualified} t where ${match})`,
            // The key alone: the check reads the live row (t), the change's other values are not needed there.
            [JSON.stringify(indexes.map((i) => onlyColumns(work[i]!.row.record ?? {}, new Set(meta.pk))))],
          );
          for (const r of rows) out.add(indexes[r.ord - 1]!);
        }
        return undefined;
      });
    } catch (err) {
      // A role that does not exist (or lost its privileges meanwhile) sees none of these changes.
      if (!this.#quiet) console.error(`[localbase] realtime: checking RLS as ${claims.role} failed:`, pgErrorText(err));
    }
    return out;
  }
}
