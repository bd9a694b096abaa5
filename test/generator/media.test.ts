/** The `Media` field type of the schema language: parse -> IR -> snapshot -> emitted SQL and TS. */
import { describe, expect, it } from 'vitest';
import { parseSchemaText } from '../../generator/index.ts';
import { fromSnapshot, toSnapshot } from '../../runtime/ir/snapshot.ts';

const fieldsOf = (text: string) => {
  const result = parseSchemaText(text, 'schema.ts');
  if (!result.ok) return { diagnostics: result.diagnostics };
  return { ir: result.ir, fields: Object.fromEntries(result.ir.models[0].fields.map((f) => [f.name, f])) };
};

describe('Media fields', () => {
  it('reads `Media` imported from svc-gen/schema as a media reference in a text column', () => {
    const { ir, fields } = fieldsOf(`
      import { defineSchema, type Media } from 'svc-gen/schema';
      export interface Company {
        id: string;
        /** @index */
        logo?: Media;
        banner: Media;
      }
      export default defineSchema({ models: {} });
    `);
    expect(fields!.logo).toMatchObject({ type: { kind: 'media' }, column: 'logo', inputName: 'logo', required: false, index: true });
    expect(fields!.banner).toMatchObject({ type: { kind: 'media' }, required: true });
    expect(fromSnapshot(JSON.parse(JSON.stringify(toSnapshot(ir!))))).toEqual(ir);
  });

  it('follows an aliased import', () => {
    const { fields } = fieldsOf(`
      import { type Media as Picture } from 'svc-gen/schema';
      export interface Company { id: string; logo?: Picture }
    `);
    expect(fields!.logo.type).toEqual({ kind: 'media' });
  });

  it('is a build error as a list, or when Media is not imported from svc-gen/schema', () => {
    const list = fieldsOf(`
      import { type Media } from 'svc-gen/schema';
      export interface Company { id: string; logos?: Media[] }
    `);
    expect(list.diagnostics?.[0]).toMatchObject({ code: 'UNSUPPORTED_TYPE', line: 3 });
    const unimported = fieldsOf(`export interface Company { id: string; logo?: Media }`);
    expect(unimported.diagnostics?.[0]).toMatchObject({ line: 1 });
    expect(unimported.diagnostics?.[0].message).toContain('unknown type Media');
  });
});
