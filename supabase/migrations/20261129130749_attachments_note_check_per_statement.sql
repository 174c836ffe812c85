-- The attachments policies check the note once per statement, not once per file (ADR 181).
--
-- Before: `private.is_own_note_folder(name)` per row. A `language sql` function with `set search_path` is never
-- inlined, so each row of storage.objects the policy met ran a sub-query on public.notes (with that table's own RLS
-- and its AAL2 helper) — a list of a note with 3,000 files paid it 3,000 times (≈ 0.5–1 s on localbase), and every
-- other file of the bucket the scan met paid its first checks too.
--
-- Now: the key's folders must equal [caller id, id of one of the caller's notes]. The set of those pairs is an
-- uncorrelated sub-select (read once per statement, under public.notes' RLS as before, and hashed); each row costs one
-- storage.foldername() and a hash probe. Same rule as before: exactly two folders, the first the caller, the second a
-- note of the caller that exists and that the caller may read (owner and AAL2 policies of public.notes), plus
-- private.mfa_satisfied(). Plain SQL valid on hosted Supabase (PostgreSQL 15/17) and localbase (PGlite, PostgreSQL).
drop policy "attachments: note owner select" on storage.objects;
drop policy "attachments: note owner insert" on storage.objects;
drop policy "attachments: note owner delete" on storage.objects;

create policy "attachments: note owner select" on storage.objects for select to authenticated
  using (
    bucket_id = 'attachments'
    and storage.foldername(name) in (
      select array[n.user_id::text, n.id::text] from public.notes n where n.user_id = (select auth.uid())
    )
    and (select private.mfa_satisfied())
  );

create policy "attachments: note owner insert" on storage.objects for insert to authenticated
  with check (
    bucket_id = 'attachments'
    and storage.foldername(name) in (
      select array[n.user_id::text, n.id::text] from public.notes n where n.user_id = (select auth.uid())
    )
    and (select private.mfa_satisfied())
  );

create policy "attachments: note owner delete" on storage.objects for delete to authenticated
  using (
    bucket_id = 'attachments'
    and storage.foldername(name) in (
      select array[n.user_id::text, n.id::text] from public.notes n where n.user_id = (select auth.uid())
    )
    and (select private.mfa_satisfied())
  );

-- No policy calls it any more.
drop function private.is_own_note_folder(text);
