import { describe, expect, it } from 'vitest';
import { formatDiagnostic, parseSchemaText } from '../../generator/index.ts';

function ir(text: string) {
  const result = parseSchemaText(text, 'schema.ts');
  if (!result.ok) throw new Error(result.diagnostics.map(formatDiagnostic).join('\n'));
  return result.ir;
}

describe('schema -> IR', () => {
  it('reads every supported field type', () => {
    const { models, embeds } = ir(`
      export type Level = 'a' | 'b';
      export interface Point { x: number; y?: number; labels?: string[] }
      export interface Owner { id: string; things?: Array<Thing> }
      export interface Thing {
        id: string;
        name: string;
        count?: number;
        on: boolean;
        at?: Date;
        days?: Date[];
        level: Level;
        mode?: ('x' | 'y');
        single?: 'only';
        where?: Point;
        path?: Point[];
        tags?: string[];
        owner?: Owner;
      }
    `);
    const thing = models.find((m) => m.name === 'Thing')!;
    expect(thing.table).toBe('thing');
    expect(Object.fromEntries(thing.fields.map((f) => [f.name, f.type]))).toEqual({
      name: { kind: 'scalar', scalar: 'string' },
      count: { kind: 'scalar', scalar: 'number' },
      on: { kind: 'scalar', scalar: 'boolean' },
      at: { kind: 'scalar', scalar: 'date' },
      days: { kind: 'list', of: 'date' },
      level: { kind: 'enum', enum: 'Level', values: ['a', 'b'] },
      mode: { kind: 'enum', enum: null, values: ['x', 'y'] },
      single: { kind: 'enum', enum: null, values: ['only'] },
      where: { kind: 'embed', embed: 'Point', list: false },
      path: { kind: 'embed', embed: 'Point', list: true },
      tags: { kind: 'list', of: 'string' },
      owner: { kind: 'belongsTo', model: 'Owner' },
    });
    expect(thing.fields.find((f) => f.name === 'owner')).toMatchObject({ column: 'owner_id', inputName: 'ownerId', required: false });
    expect(models.find((m) => m.name === 'Owner')!.fields[0]).toMatchObject({ column: null, type: { kind: 'hasMany', model: 'Thing', inverse: 'owner' } });
    expect(embeds[0]).toMatchObject({ name: 'Point', fields: [{ name: 'x', column: null, required: true }, { name: 'y' }, { name: 'labels' }] });
  });

  it('applies access defaults, sorts models by name and freezes the IR', () => {
    const schema = ir(`
      import { defineSchema } from 'svc-gen/schema';
      export interface Zebra { id: string }
      export interface Apple { id: string; name: string }
      export default defineSchema({ models: { Apple: { access: { read: 'public', 'update': ['Sales', 'Sales'] } } } });
    `);
    expect(schema.models.map((m) => m.name)).toEqual(['Apple', 'Zebra']);
    expect(schema.models[0].access).toEqual({
      read: { kind: 'public' },
      create: { kind: 'roles', roles: ['Admin'] },
      update: { kind: 'roles', roles: ['Sales'] },
      delete: { kind: 'roles', roles: ['Admin'] },
    });
    expect(schema.models[1].access.read).toEqual({ kind: 'authenticated' });
    expect(Object.isFrozen(schema.models[0].access.update)).toBe(true);
  });

  it('reads defaults of every scalar kind', () => {
    const [model] = ir(`
      export interface A {
        id: string;
        /** @default "it's" */ s: string;
        /** @default -2.5 */ n: number;
        /** @default true */ b: boolean;
        /** @default '2024-01-31' */ d: Date;
      }
    `).models;
    expect(model.fields.map((f) => f.default)).toEqual(["it's", -2.5, true, '2024-01-31']);
  });

  it('rejects a field name that is not an identifier', () => {
    const result = parseSchemaText(`export interface A {\n  id: string;\n  'first-name': string;\n}\n`, 'schema.ts');
    expect(result).toMatchObject({ ok: false, diagnostics: [{ code: 'UNSUPPORTED_DECLARATION', line: 3 }] });
  });
});
