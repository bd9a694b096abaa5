-- svc-gen runtime: the login throttle counts per (account, client address)
-- and per account (client ''), so that a stranger's failed guesses lock out
-- the stranger, not the owner; the account-wide count is a higher ceiling
-- against guesses spread over many addresses (docs/auth.md).
delete from svc_login_throttle;
alter table svc_login_throttle add column client text not null default '';
alter table svc_login_throttle drop constraint svc_login_throttle_pkey;
alter table svc_login_throttle add constraint svc_login_throttle_pkey primary key (email, client);
