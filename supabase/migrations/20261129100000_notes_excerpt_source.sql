-- The list's excerpt source (ADR 180): a list page carries at most 200 characters of each note instead of its whole
-- body (up to 20,000 characters; 20 long notes were 380 kB from the Data API per page, for 20 excerpts of 160).
--
-- The body with every whitespace run as one space, cut to 200 characters. Whitespace is the set the app's excerptOf
-- takes (ECMAScript's WhiteSpace and LineTerminator, written out: `\s` depends on the server's locale), so the
-- app's excerpt of this text is the excerpt of the whole body: it needs the first 161 characters of the flattened
-- text, and a leading space (a body that starts with whitespace) is one more. Stored, computed on every write of
-- the body; nobody writes it. Runs on PostgreSQL 15 (hosted Supabase), 17 and 18 (PGlite).
alter table public.notes
  add column excerpt_source text generated always as (
    left(regexp_replace(body, '[\t\n\u000b\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]+', ' ', 'g'), 200)
  ) stored;
