// Hooks for Company records, run by the runtime around each write. This file is yours:
// svc-gen writes it once and never overwrites it. Available hooks: beforeCreate,
// afterCreate, beforeUpdate, afterUpdate, beforeDelete, afterDelete.
import type { ModelHooks } from 'svc-gen/runtime';
import type { Company } from '../models.ts';

export const hooks: ModelHooks<Company> = {
  // async beforeCreate(data, ctx) {
  //   return data;
  // },
};
