-- svc-gen runtime: OAuth identities, (provider, subject) -> user. A provider
-- identity signs in the user it is linked to, whatever email the provider
-- reports later; a link to an existing account by email is made only when the
-- provider says the address is verified (docs/auth.md).
create table svc_oauth_identities (
  provider text not null,
  subject text not null,
  user_id text not null references svc_users (id) on delete cascade,
  email text,
  created_at timestamptz not null default now(),
  primary key (provider, subject)
);
create index svc_oauth_identities_user_idx on svc_oauth_identities (user_id);
