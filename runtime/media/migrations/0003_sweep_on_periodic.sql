-- The media sweep claims its interval in svc_periodic (runtime/core/periodic.ts)
-- like every periodic task; its own one-row claim table goes.
drop table if exists svc_media_sweep;
