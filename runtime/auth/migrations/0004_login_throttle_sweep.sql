-- svc-gen runtime: the periodic sweep of idle login-throttle counts deletes by
-- last_attempt_at (runtime/auth/throttle.ts): an index that starts with it, so
-- a sweep walks the rows it deletes. Built concurrently: a credential-stuffing
-- wave can leave millions of rows, and logins go on meanwhile.
-- step 1 online: index svc_login_throttle on (last_attempt_at) for the idle-count sweep
create index concurrently if not exists svc_login_throttle_last_attempt on svc_login_throttle (last_attempt_at);
