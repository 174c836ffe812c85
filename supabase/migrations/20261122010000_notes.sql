-- Notes: the first product feature (issue 6). Private to their owner; AAL2 enforced for users with a factor.
--
-- Follows the table pattern of docs/database.md: RLS on, permissive owner policies, one restrictive AAL2 policy.
-- Runs on PostgreSQL 15 (hosted Supabase), 17 and 18 (PGlite): plain SQL, every name schema-qualified.

create table public.notes (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null default auth.uid() references auth.users (id) on delete cascade,
  title text not null,
  body text,
  pinned boolean not null default false,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  -- The title sort key: case-insensitive and the same on every server, whatever its default collation.
  title_key text generated always as (lower(title)) stored,
  -- char_length counts characters (not bytes), as the form does.
  constraint notes_title_length check (char_length(title) between 1 and 200),
  constraint notes_body_length check (body is null or char_length(body) <= 20000)
);

comment on table public.notes is 'Private notes; each row is visible to and changeable by its owner only (RLS).';

-- The list's sort orders, per user: pinned first, then the chosen column, id as the tie-breaker so pages never
-- overlap or skip rows when two notes share a timestamp or a title.
create index notes_user_updated_idx on public.notes (user_id, pinned desc, updated_at desc, id);
create index notes_user_created_idx on public.notes (user_id, pinned desc, created_at desc, id);
create index notes_user_title_idx on public.notes (user_id, pinned desc, title_key, id);

-- updated_at follows every change of title or body (pinning is not an edit); restoring a deleted note (an insert)
-- keeps the times it had.
create or replace function private.touch_updated_at()
  returns trigger
  language plpgsql
  set search_path = ''
as $$
begin
  new.updated_at := now();
  return new;
end
$$;

revoke all on function private.touch_updated_at() from public;

create trigger notes_touch_updated_at
  before update on public.notes
  for each row
  when (old.title is distinct from new.title or old.body is distinct from new.body)
  execute function private.touch_updated_at();

-- 1. RLS on.
alter table public.notes enable row level security;

-- 2. The owner, and nobody else, may read and change their rows (anon has no policy: it sees nothing).
create policy "owner: select" on public.notes for select to authenticated using (user_id = (select auth.uid()));
create policy "owner: insert" on public.notes for insert to authenticated with check (user_id = (select auth.uid()));
create policy "owner: update" on public.notes for update to authenticated
  using (user_id = (select auth.uid())) with check (user_id = (select auth.uid()));
create policy "owner: delete" on public.notes for delete to authenticated using (user_id = (select auth.uid()));

-- 3. AAL2 for users who enrolled a second factor (private.mfa_satisfied(), migration 20261122000000).
create policy "mfa: aal2 when enrolled" on public.notes as restrictive to authenticated
  using ((select private.mfa_satisfied())) with check ((select private.mfa_satisfied()));

-- Privileges: signed-in users work with their notes through the Data API; anon gets nothing at all.
revoke all on table public.notes from anon;
grant select, insert, update, delete on table public.notes to authenticated;
grant all on table public.notes to service_role;
