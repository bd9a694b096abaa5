// Hooks for Activity records, run by the runtime around each write. This file is yours:
// svc-gen writes it once and never overwrites it. Available hooks: beforeCreate,
// afterCreate, beforeUpdate, afterUpdate, beforeDelete, afterDelete.
import type { ModelHooks } from 'svc-gen/runtime';
import type { Activity } from '../models.ts';

export const hooks: ModelHooks<Activity> = {
  // async beforeCreate(data, ctx) {
  //   return data;
  // },
};
