/**
 * Core routes: /health (process up), /ready (database reachable and every
 * migration applied, else 503), /meta/schema (the IR), /schema.ts (the schema
 * file, development only).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pendingMigrations } from '../db/index.ts';
import { notFound } from '../http/errors.ts';
import type { Capability } from '../service/types.ts';

export const core: Capability = {
  name: 'core',
  async init(ctx) {
    const sets = ctx.migrations;
    ctx.router.get('/health', (koa) => {
      koa.body = { status: 'ok' };
    });
    ctx.router.get('/ready', async (koa) => {
      try {
        const pending = await pendingMigrations(ctx.db, sets);
        koa.status = pending.length === 0 ? 200 : 503;
        koa.body = pending.length === 0 ? { status: 'ready' } : { status: 'not ready', error: 'migrations pending', pending };
      } catch (error) {
        ctx.log.warn({ err: error }, 'readiness check failed');
        koa.status = 503;
        koa.body = { status: 'not ready', error: 'database unavailable' };
      }
    });
    ctx.router.get('/meta/schema', (koa) => {
      koa.body = ctx.ir;
    });
    const schemaFile = join(ctx.root, 'schema.ts');
    ctx.router.get('/schema.ts', (koa) => {
      if (ctx.config.env === 'production' || !existsSync(schemaFile)) throw notFound();
      koa.type = 'text/plain; charset=utf-8';
      koa.body = readFileSync(schemaFile, 'utf8');
    });
  },
};
