-- svc-gen runtime: users, sessions, refresh tokens, login throttle, OAuth state.

create table svc_users (
  id text primary key,
  -- Normalised (trimmed, lower-case); the unique constraint is what makes
  -- concurrent registrations of one email end in exactly one row.
  email text not null constraint svc_users_email_key unique,
  -- argon2id (or a legacy bcrypt hash, rehashed on the next login); null for OAuth-only users.
  password_hash text,
  role text not null,
  tenant_id text,
  first_name text,
  last_name text,
  disabled boolean not null default false,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

-- One row per sign-in. Access tokens carry its id (claim `sid`); role and tenant
-- are copied here so that an admin's change applies to every live session.
create table svc_sessions (
  id text primary key,
  user_id text not null references svc_users (id) on delete cascade,
  role text not null,
  tenant_id text,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  revoked_at timestamptz,
  revoked_reason text
);
create index svc_sessions_user on svc_sessions (user_id);

-- Every refresh token ever issued, by SHA-256 only. `used_at` set = rotated;
-- presenting a used token again is reuse and revokes the session.
create table svc_refresh_tokens (
  token_hash text primary key,
  session_id text not null references svc_sessions (id) on delete cascade,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  used_at timestamptz
);
create index svc_refresh_tokens_session on svc_refresh_tokens (session_id);

-- Per-account login throttle (see docs/auth.md): attempts since the last
-- success, and the time before which no further attempt is evaluated.
create table svc_login_throttle (
  email text primary key,
  attempts integer not null,
  last_attempt_at timestamptz not null,
  locked_until timestamptz
);

-- OAuth authorization requests in flight: single-use, short-lived, shared by
-- every instance (the callback may reach another one).
create table svc_oauth_states (
  state_hash text primary key,
  provider text not null,
  browser_hash text not null,
  code_verifier text not null,
  nonce text not null,
  redirect_uri text not null,
  expires_at timestamptz not null
);
