import { describe, expect, it } from 'vitest';
import { projectionTableName as generatorName } from '../../generator/ir/naming.ts';
import { projectionTableName } from '../../runtime/projections/names.ts';

describe('projection table names', () => {
  it('match the generator (projections/<table>.sql), also past 63 bytes', () => {
    for (const table of ['product', 'order', 'a'.repeat(52), 'b'.repeat(80), 'überlange_tabelle_'.repeat(4)]) {
      expect(projectionTableName(table)).toBe(generatorName(table));
    }
  });
});
