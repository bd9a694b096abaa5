/**
 * Reads the `actions` and `workflows` blocks of `defineSchema({...})` as
 * literal trees (CONTRACT sections 11 and 12). A top-level key svc-gen does
 * not know is reported, so a misspelt `workflow:` is never silently ignored.
 */
import { Node, type SourceFile } from 'ts-morph';
import { diagnostic, type Diagnostic } from '../diagnostics.ts';
import type { RawValue } from './facts.ts';
import { readValue, schemaObject } from './value.ts';

export const SCHEMA_KEYS = ['models', 'actions', 'workflows'] as const;

export interface RawAutomation {
  readonly actions: RawValue | null;
  readonly workflows: RawValue | null;
}

export function readAutomation(source: SourceFile, file: string, diagnostics: Diagnostic[]): RawAutomation {
  const object = schemaObject(source);
  const out: { actions: RawValue | null; workflows: RawValue | null } = { actions: null, workflows: null };
  if (!object) return out;
  for (const property of object.getProperties()) {
    if (!Node.isPropertyAssignment(property)) continue;
    const nameNode = property.getNameNode();
    const key = Node.isIdentifier(nameNode) ? nameNode.getText() : Node.isStringLiteral(nameNode) ? nameNode.getLiteralValue() : null;
    const initializer = property.getInitializer();
    if (key === null || !initializer) continue;
    if (key === 'actions' || key === 'workflows') out[key] = readValue(initializer, file, diagnostics);
    else if (!(SCHEMA_KEYS as readonly string[]).includes(key)) {
      const at = { file, line: property.getStartLineNumber() };
      diagnostics.push(diagnostic('UNKNOWN_OPTION', at, `unknown key ${key} in defineSchema (expected ${SCHEMA_KEYS.join(', ')})`));
    }
  }
  return out;
}
