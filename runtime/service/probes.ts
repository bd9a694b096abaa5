/**
 * Core routes: /health (process up), /ready (database reachable and every
 * migration applied, else 503), /meta/schema (the IR, with every model's
 * access rules: Admin only in production, CONTRACT section 15), /schema.ts
 * (the schema file, development only).
 *
 * A database migrated by a newer version (applied migrations this build has no
 * file for) is found at boot: one warning line, and /ready answers 503 naming
 * them (a rollback to older code against a newer schema), unless
 * SVC_ALLOW_UNKNOWN_MIGRATIONS=true. Unknown migrations applied after this
 * instance booted (a newer version rolling out and migrating) leave it ready:
 * they are listed as `newer`, so a rolling upgrade never empties the pool.
 */
import { existsSync, readFileSync } from 'node:fs';
import type Koa from 'koa';
import { join } from 'node:path';
import { appliedMigrations, migrationStatus, runningSteps, unknownMigrations } from '../db/index.ts';
import { principalOf, requireRole } from '../auth/index.ts';
import { forbidden, notFound } from '../http/errors.ts';
import { defineCapability } from '../core/index.ts';

/**
 * A probe's answer, as JSON text. Koa 3's body setter tests an object body
 * against the global `Response`, and the first touch of that global loads
 * Node's fetch implementation (undici): 35-45 ms here, which the first
 * /ready of a cold start would wait for. (The first REST answer with an object
 * body still loads it, once per process.)
 */
function answer(koa: Koa.Context, status: number, body: object): void {
  koa.status = status;
  koa.type = 'json';
  koa.body = JSON.stringify(body);
}

export const core = defineCapability({
  name: 'core',
  provides: [],
  requires: ['auth'],
  async init(ctx) {
    const sets = ctx.migrations;
    const unknownAtBoot = new Set(await unknownMigrations(ctx.db, sets));
    const allowUnknown = ctx.config.allowUnknownMigrations;
    if (unknownAtBoot.size > 0) {
      ctx.log.warn({ unknown: [...unknownAtBoot] }, `the database has ${unknownAtBoot.size} migration(s) this build does not know `
        + `(${[...unknownAtBoot].slice(0, 3).join(', ')}${unknownAtBoot.size > 3 ? ', ...' : ''}): it was migrated by a newer version; `
        + (allowUnknown ? 'serving anyway (SVC_ALLOW_UNKNOWN_MIGRATIONS=true)'
          : '/ready answers 503 until that version is deployed (or set SVC_ALLOW_UNKNOWN_MIGRATIONS=true)'));
    }
    ctx.router.get('/health', (koa) => {
      answer(koa, 200, { status: 'ok' });
    });
    ctx.router.get('/ready', async (koa) => {
      try {
        const { pending, unknown } = await migrationStatus(ctx.db, sets);
        if (pending.length > 0) {
          return answer(koa, 503, { status: 'not ready', error: 'migrations pending', pending });
        }
        const rolledBack = unknown.filter((name) => unknownAtBoot.has(name));
        if (rolledBack.length > 0 && !allowUnknown) {
          return answer(koa, 503, {
            status: 'not ready',
            error: 'the database was migrated by a newer version: these migrations are unknown to this build',
            unknown: rolledBack,
          });
        }
        answer(koa, 200, unknown.length === 0 ? { status: 'ready' } : { status: 'ready', newer: unknown });
      } catch (error) {
        ctx.log.warn({ err: error }, 'readiness check failed');
        answer(koa, 503, { status: 'not ready', error: 'database unavailable' });
      }
    });
    ctx.router.get('/meta/schema', async (koa) => {
      if (ctx.config.env === 'production' && (await principalOf(koa, ctx.services.auth)).role !== 'Admin') throw forbidden();
      koa.body = ctx.ir;
    });
    // The console's migrations view (CONTRACT section 16): applied files with their time, pending, held-back and unknown
    // ones, and the steps a runner is in (a backfill with its progress, as on the realtime channel `migrations`).
    ctx.router.get('/meta/migrations', requireRole(ctx.services.auth, ['Admin']), async (koa) => {
      const [applied, status, running] = await Promise.all([appliedMigrations(ctx.db), migrationStatus(ctx.db, sets), runningSteps(ctx.db)]);
      koa.body = { applied, pending: status.pending, heldBack: status.heldBack, unknown: status.unknown, running };
    });
    const schemaFile = join(ctx.root, 'schema.ts');
    ctx.router.get('/schema.ts', (koa) => {
      if (ctx.config.env === 'production' || !existsSync(schemaFile)) throw notFound();
      koa.type = 'text/plain; charset=utf-8';
      koa.body = readFileSync(schemaFile, 'utf8');
    });
  },
});
