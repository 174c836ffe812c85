-- Seed data, applied once to a new local database (localbase at its first start, or `supabase db reset`).
--
-- Demo account (printed by `npm run dev`, listed in the README):
--   email:    demo@example.com
--   password: foyer-demo-2026
-- It owns 30 notes, so a newcomer sees a real, sorted, paginated list at once. Never seed this into production.

-- The user, as GoTrue stores one that signed up with email + password and confirmed the address. Token columns are
-- '' rather than NULL because hosted Supabase's auth server cannot read NULL there. pgcrypto's crypt() makes the
-- bcrypt hash that both GoTrue and localbase verify.
insert into auth.users (
  instance_id, id, aud, role, email, encrypted_password, email_confirmed_at,
  confirmation_token, recovery_token, email_change_token_new, email_change,
  raw_app_meta_data, raw_user_meta_data, created_at, updated_at
) values (
  '00000000-0000-0000-0000-000000000000', 'd0e5f0a1-5eed-4c0d-9a7e-000000000001', 'authenticated', 'authenticated',
  'demo@example.com', crypt('foyer-demo-2026', gen_salt('bf', 10)), now() - interval '60 days',
  '', '', '', '',
  '{"provider": "email", "providers": ["email"]}',
  '{"sub": "d0e5f0a1-5eed-4c0d-9a7e-000000000001", "email": "demo@example.com", "email_verified": true, "phone_verified": false, "display_name": "Demo"}',
  now() - interval '60 days', now() - interval '60 days'
);

insert into auth.identities (provider_id, user_id, identity_data, provider, last_sign_in_at, created_at, updated_at)
values (
  'd0e5f0a1-5eed-4c0d-9a7e-000000000001', 'd0e5f0a1-5eed-4c0d-9a7e-000000000001',
  '{"sub": "d0e5f0a1-5eed-4c0d-9a7e-000000000001", "email": "demo@example.com", "email_verified": true, "phone_verified": false}',
  'email', now() - interval '60 days', now() - interval '60 days', now() - interval '60 days'
);

-- 30 notes spread over the last seven weeks; n orders them, the first three are pinned.
insert into public.notes (user_id, title, body, pinned, created_at, updated_at)
select
  'd0e5f0a1-5eed-4c0d-9a7e-000000000001',
  seed.title,
  seed.body,
  seed.n <= 3,
  now() - (seed.n * interval '37 hours') - interval '3 days',
  now() - (seed.n * interval '37 hours') + (seed.n % 4) * interval '20 hours' - interval '3 days'
from (values
  (1, 'Welcome to Foyer', 'This is your notes list. Press N (or the New button) to write a note, click a title to edit it, and pin the ones you need every day — pinned notes stay on top of every sort.'),
  (2, 'Quarterly planning: open questions', 'Which two bets do we fund? Hiring plan for the platform team. Move the customer council to the first week of the month.'),
  (3, 'Passwords & recovery codes live in the password manager', 'Not here. Notes are private to you, but a password manager is built for secrets.'),
  (4, 'Reading list', 'Designing Data-Intensive Applications (ch. 7 again); The Pragmatic Programmer; Thinking in Systems; Working in Public.'),
  (5, 'Groceries', 'Oat milk, lemons, basil, parmesan, sourdough, coffee beans (medium roast), dish soap.'),
  (6, 'Ideas for the team offsite', 'Morning: retro on the launch. Afternoon: hike or cooking class — vote in the channel. Dinner somewhere with a long table.'),
  (7, 'Bug: export drops the last row', 'Repro: 21 rows, export CSV, only 20 arrive. Suspect an off-by-one in the range end (inclusive vs exclusive).'),
  (8, 'Call with Dana — notes', 'Wants weekly digest emails; happy with search; asked about sharing a note read-only. Follow up Friday.'),
  (9, 'Recipe: weeknight dal', 'Red lentils 1 cup, water 3 cups, turmeric, salt. Simmer 20 min. Tadka: ghee, cumin, garlic, chili. Lime at the end.'),
  (10, 'Gift ideas', 'Mum: a good pair of secateurs. Sam: climbing chalk bag. Alex: the board game with the trains.'),
  (11, 'Interview loop checklist', 'Share the scorecard beforehand. One interviewer owns each signal. Debrief within 24 hours, written first, then talk.'),
  (12, 'Apartment: things to fix', 'Bathroom fan rattles. Kitchen drawer runner. Re-caulk the tub. Ask the landlord about the radiator valve.'),
  (13, 'Postmortem template', 'Summary · Impact · Timeline (UTC) · Root cause · What went well · What went badly · Action items with owners.'),
  (14, 'Running plan — 10k in May', 'Three runs a week: one easy, one tempo, one long. Add 10 % a week at most. Rest week every fourth week.'),
  (15, 'Conference talk outline', 'Hook: the 2 a.m. page. Part 1: why offline-first dev environments. Part 2: demo. Part 3: what we got wrong.'),
  (16, 'Words I keep misspelling', 'accommodate, occurrence, liaison, millennium, rhythm, definitely, separate.'),
  (17, 'Weekend in Lisbon', 'Tram 28 early before the crowds. Time Out Market for lunch. Belém on Sunday. Book the fado place in advance.'),
  (18, 'Keyboard shortcuts worth learning', 'N — new note. F8 — notifications. Esc — close a dialog. Tab / Shift+Tab — move around the list.'),
  (19, 'Budget 2027 draft', 'Rent 38 %, savings 20 %, food 12 %, transport 6 %, fun 8 %, everything else 16 %. Revisit in March.'),
  (20, 'Onboarding doc feedback', 'Step 3 assumes Docker; we no longer need it. The screenshots are from the old theme. Add the demo account.'),
  (21, 'Podcast episodes to catch up on', null),
  (22, 'Plant care', 'Monstera: water when the top 3 cm are dry. Pothos: forgiving. Fiddle leaf: do not move it, ever.'),
  (23, 'Migration plan: v1 → v2 API', 'Ship v2 beside v1. Dual-write for two weeks. Flip readers one service at a time. Delete v1 after 30 quiet days.'),
  (24, 'Birthday party — to do', 'Invitations by the 5th. Cake from the corner bakery. Playlist. Borrow chairs from next door.'),
  (25, 'Questions for the accountant', 'Home office deduction? Quarterly estimates vs. withholding. Keep receipts for how long?'),
  (26, 'Design review: settings page', 'Group security apart from profile. Destructive actions at the bottom, with a confirmation. Keep labels short.'),
  (27, 'Movies to watch', 'Perfect Days; Past Lives; The Zone of Interest; Anatomy of a Fall.'),
  (28, 'Car service', 'Due at 60,000 km: brake fluid, cabin filter, tyre rotation. Booked for the 14th, 8:30.'),
  (29, 'Things that went well this year', 'Shipped the redesign. Learned to make bread. Ran a half marathon. Kept this list going.'),
  (30, 'First note', 'Hello! Everything here is stored in PostgreSQL, protected by row-level security: only you can read it.')
) as seed (n, title, body);
