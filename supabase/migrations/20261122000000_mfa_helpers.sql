-- MFA helpers: enforce AAL2 in the database for users who have enrolled a second factor (issue 5, docs/database.md).
--
-- THE PATTERN FOR EVERY PRODUCT TABLE (public.X):
--
--   alter table public.X enable row level security;
--   -- permissive owner policies (who may see/change which rows), e.g.
--   create policy "owner: select" on public.X for select to authenticated using (owner = (select auth.uid()));
--   create policy "owner: insert" on public.X for insert to authenticated with check (owner = (select auth.uid()));
--   create policy "owner: update" on public.X for update to authenticated
--     using (owner = (select auth.uid())) with check (owner = (select auth.uid()));
--   create policy "owner: delete" on public.X for delete to authenticated using (owner = (select auth.uid()));
--   -- plus ONE restrictive policy (ANDed with the permissive ones, for every command):
--   create policy "mfa: aal2 when enrolled" on public.X as restrictive to authenticated
--     using ((select private.mfa_satisfied())) with check ((select private.mfa_satisfied()));
--
-- Why a helper: the naive restrictive policy that reads auth.mfa_factors directly runs with the caller's
-- privileges, and the `authenticated` role has no SELECT on the auth schema's tables, so every query on the table
-- fails with "permission denied for table mfa_factors" (42501). The helper is `security definer` (it runs as its
-- owner, the migration role, which may read auth.mfa_factors), with an empty search_path (every name qualified, so
-- a caller cannot shadow auth.mfa_factors or auth.jwt() with objects of their own) and `stable`; wrapping the call in
-- `(select …)` lets PostgreSQL evaluate it once per statement instead of once per row.
--
-- Why schema `private`: the Data API (PostgREST /rest/v1) exposes only the schemas listed in its config (`public`),
-- so a function here is not callable as /rest/v1/rpc/…, and anon has no USAGE on the schema at all. In `public`
-- it would be an rpc endpoint and Supabase's default privileges would grant EXECUTE to anon as well.

create schema if not exists private;
revoke all on schema private from public;
revoke all on schema private from anon;
grant usage on schema private to authenticated;

-- True when the caller's session is at aal2, or when the caller has no verified factor (nothing to step up to).
-- False for an aal1 session of a user who has enrolled and verified a factor: that session must pass /mfa first.
create or replace function private.mfa_satisfied()
  returns boolean
  language sql
  stable
  security definer
  set search_path = ''
as $$
  select coalesce(auth.jwt() ->> 'aal', 'aal1') = 'aal2'
    or not exists (
      select 1
      from auth.mfa_factors f
      where f.user_id = auth.uid()
        and f.status = 'verified'
    )
$$;

comment on function private.mfa_satisfied() is
  'RLS helper: true at aal2 or when the user has no verified MFA factor. Use in a restrictive policy, see docs/database.md.';

-- Functions are executable by PUBLIC by default: only signed-in users may call it.
revoke all on function private.mfa_satisfied() from public;
revoke all on function private.mfa_satisfied() from anon;
grant execute on function private.mfa_satisfied() to authenticated;
