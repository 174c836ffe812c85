-- Files (issue 14, ADR 037): profile pictures in the public bucket `avatars`, note attachments in the private bucket
-- `attachments`. Runs on hosted Supabase (PostgreSQL 15/17, `supabase db push`) and on localbase (PGlite and
-- PostgreSQL): the `storage` schema is Supabase's (localbase's bootstrap creates the same tables and functions);
-- every name schema-qualified; the buckets are inserted once and never overwritten (a project may have tuned them).
--
-- Keys:
--   avatars      <user id>/<file>                 e.g. 6f1c…/1732450000000.webp  (public: anyone may read by URL)
--   attachments  <user id>/<note id>/<file>       e.g. 6f1c…/0a9e…/report.pdf   (private: the note's owner only)
--
-- Writes of both and reads of attachments also need private.mfa_satisfied() (docs/database.md): a user with a
-- verified second factor reaches them only with an aal2 session. Avatars are read through the public URL, which
-- no policy governs.

insert into storage.buckets (id, name, public, file_size_limit, allowed_mime_types)
values
  ('avatars', 'avatars', true, 2000000, array['image/png', 'image/jpeg', 'image/webp', 'image/gif']),
  ('attachments', 'attachments', false, 20000000, null)
on conflict do nothing;

-- Avatars: a signed-in user (guests too) writes only under their own folder. No select policy is needed to show
-- a picture (public bucket); the one below lets the owner list, replace (upsert) and remove their own files.
create policy "avatars: owner select" on storage.objects for select to authenticated
  using (
    bucket_id = 'avatars'
    and (storage.foldername(name))[1] = (select auth.uid())::text
  );

create policy "avatars: owner insert" on storage.objects for insert to authenticated
  with check (
    bucket_id = 'avatars'
    and (storage.foldername(name))[1] = (select auth.uid())::text
    and array_length(storage.foldername(name), 1) = 1
    and (select private.mfa_satisfied())
  );

create policy "avatars: owner update" on storage.objects for update to authenticated
  using (
    bucket_id = 'avatars'
    and (storage.foldername(name))[1] = (select auth.uid())::text
    and (select private.mfa_satisfied())
  )
  with check (
    bucket_id = 'avatars'
    and (storage.foldername(name))[1] = (select auth.uid())::text
    and array_length(storage.foldername(name), 1) = 1
    and (select private.mfa_satisfied())
  );

create policy "avatars: owner delete" on storage.objects for delete to authenticated
  using (
    bucket_id = 'avatars'
    and (storage.foldername(name))[1] = (select auth.uid())::text
    and (select private.mfa_satisfied())
  );

-- Attachments follow the note: the key's first folder is the caller, the second one of the caller's notes, which
-- must exist (the sub-select runs under public.notes' own RLS, owner and AAL2 policies included).
create or replace function private.is_own_note_folder(object_name text)
  returns boolean
  language sql
  stable
  set search_path = ''
as $$
  select array_length(storage.foldername(object_name), 1) = 2
    and (storage.foldername(object_name))[1] = auth.uid()::text
    and exists (
      select 1 from public.notes n
       where n.user_id = auth.uid()
         and n.id::text = (storage.foldername(object_name))[2]
    )
$$;

comment on function private.is_own_note_folder(text) is
  'True when a storage key is <caller id>/<id of a note of the caller>/<file>; runs as the caller (notes RLS applies).';

revoke all on function private.is_own_note_folder(text) from public, anon;
grant execute on function private.is_own_note_folder(text) to authenticated;

create policy "attachments: note owner select" on storage.objects for select to authenticated
  using (
    bucket_id = 'attachments'
    and private.is_own_note_folder(name)
    and (select private.mfa_satisfied())
  );

create policy "attachments: note owner insert" on storage.objects for insert to authenticated
  with check (
    bucket_id = 'attachments'
    and private.is_own_note_folder(name)
    and (select private.mfa_satisfied())
  );

create policy "attachments: note owner delete" on storage.objects for delete to authenticated
  using (
    bucket_id = 'attachments'
    and private.is_own_note_folder(name)
    and (select private.mfa_satisfied())
  );

-- No update policy for attachments: a file is never replaced or moved in place (upload a new one, delete the old).
