-- localbase bootstrap: the parts of Supabase's database that the auth server and PostgREST-style API rely on.
-- Idempotent (safe to run on every start) and valid on PostgreSQL 15, 17 and 18 (PGlite 0.5).

-- Roles are cluster-wide on a real server: create them only when missing.
do $$
begin
  if not exists (select 1 from pg_roles where rolname = 'anon') then
    create role anon nologin noinherit;
  end if;
  if not exists (select 1 from pg_roles where rolname = 'authenticated') then
    create role authenticated nologin noinherit;
  end if;
  if not exists (select 1 from pg_roles where rolname = 'service_role') then
    create role service_role nologin noinherit bypassrls;
  end if;
  if not exists (select 1 from pg_roles where rolname = 'authenticator') then
    create role authenticator nologin noinherit;
  end if;
  if not exists (select 1 from pg_roles where rolname = 'supabase_auth_admin') then
    create role supabase_auth_admin nologin noinherit;
  end if;
end
$$;

grant anon, authenticated, service_role to authenticator;
-- The connecting user (postgres in PGlite) switches into these roles with SET LOCAL ROLE.
do $$
begin
  execute format('grant anon, authenticated, service_role to %I', current_user);
exception when others then
  null; -- a superuser does not need the membership
end
$$;

create schema if not exists extensions;
create extension if not exists pgcrypto with schema extensions;
create extension if not exists "uuid-ossp" with schema extensions;
create extension if not exists citext with schema extensions;
create extension if not exists pg_trgm with schema extensions;
grant usage on schema extensions to anon, authenticated, service_role;

-- Supabase's default grants on schema public: access is controlled by RLS policies, not by grants.
grant usage on schema public to anon, authenticated, service_role;
grant all on all tables in schema public to anon, authenticated, service_role;
grant all on all sequences in schema public to anon, authenticated, service_role;
grant all on all functions in schema public to anon, authenticated, service_role;
alter default privileges in schema public grant all on tables to anon, authenticated, service_role;
alter default privileges in schema public grant all on sequences to anon, authenticated, service_role;
alter default privileges in schema public grant all on functions to anon, authenticated, service_role;

create schema if not exists auth;
grant usage on schema auth to anon, authenticated, service_role;

create table if not exists auth.users (
  instance_id uuid null,
  id uuid not null primary key default gen_random_uuid(),
  aud varchar(255) null,
  role varchar(255) null,
  email varchar(255) null,
  encrypted_password varchar(255) null,
  email_confirmed_at timestamptz null,
  invited_at timestamptz null,
  confirmation_token varchar(255) null,
  confirmation_sent_at timestamptz null,
  recovery_token varchar(255) null,
  recovery_sent_at timestamptz null,
  email_change_token_new varchar(255) null,
  email_change varchar(255) null,
  email_change_sent_at timestamptz null,
  email_change_token_current varchar(255) null default '',
  email_change_confirm_status smallint null default 0,
  last_sign_in_at timestamptz null,
  raw_app_meta_data jsonb null,
  raw_user_meta_data jsonb null,
  is_super_admin boolean null,
  created_at timestamptz null default now(),
  updated_at timestamptz null default now(),
  phone text null default null,
  phone_confirmed_at timestamptz null,
  phone_change text null default '',
  phone_change_token varchar(255) null default '',
  phone_change_sent_at timestamptz null,
  banned_until timestamptz null,
  confirmed_at timestamptz generated always as (least(email_confirmed_at, phone_confirmed_at)) stored,
  reauthentication_token varchar(255) null default '',
  reauthentication_sent_at timestamptz null,
  is_sso_user boolean not null default false,
  deleted_at timestamptz null,
  is_anonymous boolean not null default false
);
create unique index if not exists users_email_partial_key on auth.users (lower(email)) where is_sso_user = false and email is not null and email <> '';
create unique index if not exists users_phone_key on auth.users (phone) where phone is not null and phone <> '';
create index if not exists users_instance_id_idx on auth.users (instance_id);

create table if not exists auth.identities (
  provider_id text not null,
  user_id uuid not null references auth.users (id) on delete cascade,
  identity_data jsonb not null,
  provider text not null,
  last_sign_in_at timestamptz null,
  created_at timestamptz null default now(),
  updated_at timestamptz null default now(),
  email text generated always as (lower(identity_data ->> 'email')) stored,
  id uuid not null primary key default gen_random_uuid(),
  constraint identities_provider_id_provider_unique unique (provider_id, provider)
);
create index if not exists identities_user_id_idx on auth.identities (user_id);

create table if not exists auth.sessions (
  id uuid not null primary key,
  user_id uuid not null references auth.users (id) on delete cascade,
  created_at timestamptz null default now(),
  updated_at timestamptz null default now(),
  factor_id uuid null,
  aal text not null default 'aal1' check (aal in ('aal1', 'aal2', 'aal3')),
  not_after timestamptz null,
  refreshed_at timestamp null,
  user_agent text null,
  ip text null,
  tag text null
);
create index if not exists sessions_user_id_idx on auth.sessions (user_id);

create table if not exists auth.refresh_tokens (
  instance_id uuid null,
  id bigserial primary key,
  token varchar(255) null unique,
  user_id varchar(255) null,
  revoked boolean null default false,
  created_at timestamptz null default now(),
  updated_at timestamptz null default now(),
  parent varchar(255) null,
  session_id uuid null references auth.sessions (id) on delete cascade
);
create index if not exists refresh_tokens_session_id_revoked_idx on auth.refresh_tokens (session_id, revoked);
create index if not exists refresh_tokens_parent_idx on auth.refresh_tokens (parent);

create table if not exists auth.mfa_factors (
  id uuid not null primary key,
  user_id uuid not null references auth.users (id) on delete cascade,
  friendly_name text null,
  factor_type text not null check (factor_type in ('totp', 'webauthn', 'phone')),
  status text not null check (status in ('unverified', 'verified')),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  secret text null,
  phone text null,
  last_challenged_at timestamptz null,
  -- localbase: the last accepted TOTP time step, so that a code is accepted only once
  last_used_step integer null
);
create index if not exists mfa_factors_user_id_idx on auth.mfa_factors (user_id);

create table if not exists auth.mfa_challenges (
  id uuid not null primary key,
  factor_id uuid not null references auth.mfa_factors (id) on delete cascade,
  created_at timestamptz not null default now(),
  verified_at timestamptz null,
  ip_address text not null default '',
  otp_code text null
);

create table if not exists auth.mfa_amr_claims (
  session_id uuid not null references auth.sessions (id) on delete cascade,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  authentication_method text not null,
  id uuid not null primary key default gen_random_uuid(),
  constraint mfa_amr_claims_session_id_authentication_method_pkey unique (session_id, authentication_method)
);

create table if not exists auth.one_time_tokens (
  id uuid not null primary key default gen_random_uuid(),
  user_id uuid not null references auth.users (id) on delete cascade,
  token_type text not null check (token_type in ('confirmation_token', 'reauthentication_token', 'recovery_token',
    'email_change_token_new', 'email_change_token_current', 'phone_change_token')),
  token_hash text not null check (char_length(token_hash) > 0),
  relates_to text not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint one_time_tokens_user_id_token_type_key unique (user_id, token_type)
);
create index if not exists one_time_tokens_token_hash_idx on auth.one_time_tokens (token_hash);

-- Helpers exactly as Supabase defines them (reading the claims PostgREST sets per request).
create or replace function auth.uid() returns uuid
  language sql stable
as $$
  select coalesce(
    nullif(current_setting('request.jwt.claim.sub', true), ''),
    (nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> 'sub')
  )::uuid
$$;

create or replace function auth.role() returns text
  language sql stable
as $$
  select coalesce(
    nullif(current_setting('request.jwt.claim.role', true), ''),
    (nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> 'role')
  )::text
$$;

create or replace function auth.email() returns text
  language sql stable
as $$
  select coalesce(
    nullif(current_setting('request.jwt.claim.email', true), ''),
    (nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> 'email')
  )::text
$$;

create or replace function auth.jwt() returns jsonb
  language sql stable
as $$
  select coalesce(
    nullif(current_setting('request.jwt.claim', true), ''),
    nullif(current_setting('request.jwt.claims', true), '')
  )::jsonb
$$;

grant execute on function auth.uid(), auth.role(), auth.email(), auth.jwt() to anon, authenticated, service_role;
-- service_role may read auth tables (as on Supabase, through the dashboard / service key).
grant all on all tables in schema auth to service_role;

create schema if not exists supabase_migrations;
create table if not exists supabase_migrations.schema_migrations (
  version text not null primary key,
  statements text[] null,
  name text null
);

-- localbase's own bookkeeping (not part of Supabase).
create schema if not exists localbase;
create table if not exists localbase.meta (
  key text primary key,
  value text not null
);
create table if not exists localbase.mailbox (
  id uuid not null primary key default gen_random_uuid(),
  to_email text not null,
  subject text not null,
  type text not null,
  html text not null,
  text text not null,
  links jsonb not null default '[]'::jsonb,
  token text null,
  created_at timestamptz not null default clock_timestamp()
);
create index if not exists mailbox_created_at_idx on localbase.mailbox (created_at desc);
-- Text messages (SMS codes of phone sign-ups and sign-ins), shown in the mailbox per phone number (ADR 034).
create table if not exists localbase.sms (
  id uuid not null primary key default gen_random_uuid(),
  to_phone text not null,
  type text not null,
  body text not null,
  token text null,
  created_at timestamptz not null default clock_timestamp()
);
create index if not exists sms_to_phone_idx on localbase.sms (to_phone, created_at desc);

-- PKCE flows (email links answered with ?code= and exchanged at /token?grant_type=pkce), as GoTrue's auth.flow_state.
create table if not exists auth.flow_state (
  id uuid not null primary key,
  user_id uuid null references auth.users (id) on delete cascade,
  auth_code text not null,
  code_challenge_method text not null check (code_challenge_method in ('s256', 'plain')),
  code_challenge text not null,
  provider_type text not null default 'email',
  provider_access_token text null,
  provider_refresh_token text null,
  created_at timestamptz null default now(),
  updated_at timestamptz null default now(),
  authentication_method text not null,
  auth_code_issued_at timestamptz null
);
create index if not exists flow_state_auth_code_idx on auth.flow_state (auth_code);
create index if not exists flow_state_user_id_idx on auth.flow_state (user_id, authentication_method, created_at desc);

-- The OAuth 2.1 server's clients, as GoTrue's auth.oauth_clients after its migrations up to 20260121000000 (id is
-- the public client_id; redirect_uris and grant_types comma-joined; a confidential client's secret as
-- base64url(SHA-256), a public client has none; deleted clients keep their row with deleted_at). Decision 035.
do $$
begin
  create type auth.oauth_registration_type as enum ('dynamic', 'manual');
exception when duplicate_object then
  null;
end
$$;
do $$
begin
  create type auth.oauth_client_type as enum ('public', 'confidential');
exception when duplicate_object then
  null;
end
$$;
create table if not exists auth.oauth_clients (
  id uuid not null,
  client_secret_hash text null,
  registration_type auth.oauth_registration_type not null,
  redirect_uris text not null,
  grant_types text not null,
  client_name text null,
  client_uri text null,
  logo_uri text null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  deleted_at timestamptz null,
  client_type auth.oauth_client_type not null default 'confidential',
  token_endpoint_auth_method text not null
    check (token_endpoint_auth_method in ('client_secret_basic', 'client_secret_post', 'none')),
  constraint oauth_clients_pkey primary key (id),
  constraint oauth_clients_client_name_length check (char_length(client_name) <= 1024),
  constraint oauth_clients_client_uri_length check (char_length(client_uri) <= 2048),
  constraint oauth_clients_logo_uri_length check (char_length(logo_uri) <= 2048)
);
create index if not exists oauth_clients_deleted_at_idx on auth.oauth_clients (deleted_at);
-- Never readable through the API roles' grants (service_role bypasses RLS, as it does on every auth table).
alter table auth.oauth_clients enable row level security;
grant all on auth.oauth_clients to service_role;

-- Storage (/storage/v1, decision 036): the schema of Supabase's storage server, so that policies written for hosted
-- Supabase (on storage.objects / storage.buckets, with storage.foldername() …) run unchanged. The bytes live on
-- disk under the storage folder, named by objects.id and objects.version; the rows say what exists.
create schema if not exists storage;
grant usage on schema storage to anon, authenticated, service_role;
do $$
begin
  create type storage.buckettype as enum ('STANDARD', 'ANALYTICS', 'VECTOR');
exception when duplicate_object then
  null;
end
$$;
create table if not exists storage.buckets (
  id text not null primary key,
  name text not null,
  owner uuid null,
  owner_id text null,
  public boolean null default false,
  avif_autodetection boolean null default false,
  file_size_limit bigint null,
  allowed_mime_types text[] null,
  type storage.buckettype not null default 'STANDARD',
  created_at timestamptz null default now(),
  updated_at timestamptz null default now()
);
create unique index if not exists bname on storage.buckets (name);
create table if not exists storage.objects (
  id uuid not null primary key default gen_random_uuid(),
  bucket_id text null references storage.buckets (id),
  name text null,
  owner uuid null,
  owner_id text null,
  created_at timestamptz null default now(),
  updated_at timestamptz null default now(),
  last_accessed_at timestamptz null default now(),
  metadata jsonb null,
  path_tokens text[] generated always as (string_to_array(name, '/')) stored,
  version text null,
  user_metadata jsonb null
);
create unique index if not exists bucketid_objname on storage.objects (bucket_id, name);
create index if not exists name_prefix_search on storage.objects (name text_pattern_ops);
alter table storage.buckets enable row level security;
alter table storage.objects enable row level security;
-- As on Supabase: the API roles hold every privilege on the tables, the policies decide.
grant all on storage.buckets, storage.objects to anon, authenticated, service_role;

create or replace function storage.foldername(name text) returns text[]
  language plpgsql immutable
as $$
declare
  _parts text[];
begin
  _parts := string_to_array(name, '/');
  return _parts[1 : array_length(_parts, 1) - 1];
end
$$;

create or replace function storage.filename(name text) returns text
  language plpgsql immutable
as $$
declare
  _parts text[];
begin
  _parts := string_to_array(name, '/');
  return _parts[array_length(_parts, 1)];
end
$$;

create or replace function storage.extension(name text) returns text
  language plpgsql immutable
as $$
declare
  _parts text[];
  _filename text;
begin
  _parts := string_to_array(name, '/');
  _filename := _parts[array_length(_parts, 1)];
  return reverse(split_part(reverse(_filename), '.', 1));
end
$$;

create or replace function storage.operation() returns text
  language plpgsql stable
as $$
begin
  return current_setting('storage.operation', true);
end
$$;

create or replace function storage.get_size_by_bucket() returns table (size bigint, bucket_id text)
  language plpgsql stable
as $$
begin
  return query
    select sum((o.metadata ->> 'size')::bigint)::bigint as size, o.bucket_id
      from storage.objects as o
     group by o.bucket_id;
end
$$;

create or replace function storage.update_updated_at_column() returns trigger
  language plpgsql
as $$
begin
  new.updated_at = now();
  return new;
end
$$;
drop trigger if exists update_objects_updated_at on storage.objects;
create trigger update_objects_updated_at before update on storage.objects
  for each row execute function storage.update_updated_at_column();

grant execute on all functions in schema storage to anon, authenticated, service_role;
-- Realtime (decision 041): the table whose RLS policies authorize private channels, as Supabase's realtime schema.
-- An app's migration writes `create policy … on realtime.messages … using (realtime.topic() = …)` as on Supabase.
-- localbase checks a channel by inserting probe rows and selecting them as the caller, then rolls back: the table
-- stays empty (broadcasts from the database, realtime.send, are not there yet), so it is not partitioned.
create schema if not exists realtime;
grant usage on schema realtime to anon, authenticated, service_role;
create table if not exists realtime.messages (
  topic text not null,
  extension text not null,
  payload jsonb null,
  event text null,
  private boolean null default false,
  updated_at timestamp without time zone not null default now(),
  inserted_at timestamp without time zone not null default now(),
  id uuid not null default gen_random_uuid(),
  binary_payload bytea null,
  constraint messages_pkey primary key (id, inserted_at)
);
alter table realtime.messages enable row level security;
grant select, insert, update on realtime.messages to anon, authenticated, service_role;
-- The sub-topic being authorized (set by the server for each check).
create or replace function realtime.topic() returns text
  language sql stable
as $$ select nullif(current_setting('realtime.topic', true), '')::text $$;
grant execute on function realtime.topic() to anon, authenticated, service_role;

-- Realtime postgres changes (decision 042): the publication apps add their tables to, as on Supabase
-- (`alter publication supabase_realtime add table …` runs unchanged), and localbase's capture of changes. PGlite has
-- no logical decoding, so an AFTER trigger on each table of the publication writes every row change into an outbox
-- and wakes the server's dispatcher with NOTIFY; a rolled-back transaction takes both with it.
do $$
begin
  if not exists (select 1 from pg_publication where pubname = 'supabase_realtime') then
    create publication supabase_realtime;
  end if;
end $$;

create unlogged table if not exists localbase.realtime_changes (
  id bigint generated always as identity primary key,
  xid xid8 not null default pg_current_xact_id(),
  schema_name text not null,
  table_name text not null,
  type text not null,
  record jsonb,
  old_record jsonb,
  created_at timestamptz not null default clock_timestamp()
);
create index if not exists realtime_changes_xid_idx on localbase.realtime_changes (xid, id);

create or replace function localbase.realtime_capture() returns trigger
  language plpgsql security definer set search_path = ''
as $$
begin
  insert into localbase.realtime_changes (schema_name, table_name, type, record, old_record)
  values (tg_table_schema, tg_table_name, tg_op,
          case when tg_op <> 'DELETE' then to_jsonb(new) end,
          case when tg_op <> 'INSERT' then to_jsonb(old) end);
  perform pg_notify('localbase_realtime', '');
  return null;
end
$$;
revoke all on function localbase.realtime_capture() from public;

-- Keeps a trigger named localbase_realtime on exactly the tables of the publication, for the operations it publishes.
create or replace function localbase.realtime_sync() returns void
  language plpgsql security definer set search_path = ''
as $$
declare
  t record;
  ops text;
  kind int2;
begin
  -- tgtype bits: 1 row, 4 insert, 8 delete, 16 update (an AFTER trigger has no BEFORE bit).
  select concat_ws(' or ', case when pubinsert then 'insert' end, case when pubupdate then 'update' end,
                   case when pubdelete then 'delete' end),
         (1 + case when pubinsert then 4 else 0 end + case when pubdelete then 8 else 0 end
            + case when pubupdate then 16 else 0 end)::int2
    into ops, kind from pg_catalog.pg_publication where pubname = 'supabase_realtime';
  -- Triggers on tables no longer published (or whose operations changed).
  for t in
    select tg.tgrelid::regclass as rel, tg.tgtype
      from pg_catalog.pg_trigger tg
     where tg.tgname = 'localbase_realtime' and not tg.tgisinternal
       and (coalesce(ops, '') = '' or tg.tgtype <> kind or tg.tgrelid not in (
             select format('%I.%I', p.schemaname, p.tablename)::regclass
               from pg_catalog.pg_publication_tables p where p.pubname = 'supabase_realtime'))
  loop
    execute format('drop trigger localbase_realtime on %s', t.rel);
  end loop;
  if coalesce(ops, '') = '' then return; end if;
  for t in
    select c.oid::regclass as rel
      from pg_catalog.pg_publication_tables p
      join pg_catalog.pg_namespace n on n.nspname = p.schemaname
      join pg_catalog.pg_class c on c.relnamespace = n.oid and c.relname = p.tablename
     where p.pubname = 'supabase_realtime' and c.relkind = 'r'
       and not exists (select 1 from pg_catalog.pg_trigger tg where tg.tgrelid = c.oid and tg.tgname = 'localbase_realtime')
  loop
    execute format('create trigger localbase_realtime after %s on %s for each row execute function localbase.realtime_capture()', ops, t.rel);
  end loop;
end
$$;
revoke all on function localbase.realtime_sync() from public;

create or replace function localbase.realtime_sync_on_ddl() returns event_trigger
  language plpgsql security definer set search_path = ''
as $$
begin
  perform localbase.realtime_sync();
end
$$;

-- Event triggers need a superuser: without one, the server still syncs after migrations and `db reset`.
do $$
begin
  drop event trigger if exists localbase_realtime_sync;
  create event trigger localbase_realtime_sync on ddl_command_end
    when tag in ('CREATE PUBLICATION', 'ALTER PUBLICATION', 'DROP PUBLICATION', 'CREATE TABLE', 'CREATE TABLE AS', 'SELECT INTO')
    execute function localbase.realtime_sync_on_ddl();
exception when insufficient_privilege then
  raise notice 'localbase: no event trigger (not a superuser): realtime triggers follow the publication after migrations only';
end $$;
select localbase.realtime_sync();
