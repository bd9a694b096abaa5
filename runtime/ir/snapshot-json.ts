/**
 * The JSON pieces both halves of the snapshot share (the models' part in
 * snapshot.ts, automation's in snapshot-automation.ts): JSON types, checked
 * readers, access rules and field types to and from JSON. Below both, so
 * neither imports the other's module for them.
 */
import { ROLES, type AccessRule, type FieldType, type Role } from './types.ts';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export function ruleToJson(rule: AccessRule): Json {
  return rule.kind === 'roles' ? [...rule.roles] : rule.kind;
}

export function sameRule(a: AccessRule, b: AccessRule): boolean {
  return JSON.stringify(ruleToJson(a)) === JSON.stringify(ruleToJson(b));
}

/** Drops null values and empty objects: the defaults fromSnapshot fills back. */
export function omitEmpty(object: Record<string, Json | undefined>): JsonObject {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(object)) {
    if (value === null || value === undefined) continue;
    if (typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 0) continue;
    out[key] = value;
  }
  return out;
}

export function typeFromJson(json: JsonObject, enumValues: ReadonlyMap<string, string[]>): FieldType {
  if (json.kind === 'enum' && typeof json.enum === 'string') {
    const values = enumValues.get(json.enum);
    if (!values) throw new Error(`schema snapshot: unknown enum ${json.enum}`);
    return { kind: 'enum', enum: json.enum, values };
  }
  return { ...json } as unknown as FieldType;
}

export function ruleFromJson(json: Json, where: string): AccessRule {
  if (json === 'public' || json === 'authenticated') return { kind: json };
  const roles = asStrings(json, where);
  const unknown = roles.find((r) => !(ROLES as readonly string[]).includes(r));
  if (unknown) throw new Error(`schema snapshot: unknown role ${unknown} in ${where}`);
  return { kind: 'roles', roles: roles as Role[] };
}

export function asObject(value: unknown, where: string): JsonObject {
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new Error(`schema snapshot: ${where} must be an object`);
  return value as JsonObject;
}

export function asArray(value: unknown, where: string): Json[] {
  if (!Array.isArray(value)) throw new Error(`schema snapshot: ${where} must be an array`);
  return value as Json[];
}

export function asStrings(value: unknown, where: string): string[] {
  const list = asArray(value, where);
  if (!list.every((v) => typeof v === 'string')) throw new Error(`schema snapshot: ${where} must be a list of strings`);
  return list as string[];
}
