-- Seed data, applied once to a new local database (localbase or `supabase db reset`).
-- Product seeds (the demo user and notes) arrive with the notes feature.
select 1;
