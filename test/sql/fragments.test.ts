/** The one SQL fragment builder: placeholders numbered once, at compile, in text order. */
import { describe, expect, it } from 'vitest';
import { compile, sql } from '../../runtime/sql/index.ts';

describe('sql fragments', () => {
  it('numbers the values of nested fragments in text order, with their casts', () => {
    const inner = sql`b = ${sql.value(2, 'int')} and c = ${sql.value('x')}`;
    const query = compile(sql`select 1 where a = ${sql.value('a', 'text')} and (${inner}) and d = ${sql.value([1], 'int[]')}`);
    expect(query).toEqual({ text: 'select 1 where a = $1::text and (b = $2::int and c = $3) and d = $4::int[]', values: ['a', 2, 'x', [1]] });
  });

  it('quotes identifiers in one place, doubling a quote', () => {
    expect(compile(sql`select ${sql.ident('t', 'we"ird')} from ${sql.ident('Order')}`).text).toBe('select "t"."we""ird" from "Order"');
  });

  it('writes an alias of our code bare, and refuses one that is not a lowercase word', () => {
    expect(compile(sql`${sql.alias('prior')}.${sql.ident('id')}`).text).toBe('prior."id"');
    expect(() => sql.alias('t; drop')).toThrow(/lowercase word/);
  });

  it('joins fragments and values; an empty join is no text', () => {
    const list = sql.join([sql`a`, sql.value(1, 'int'), sql`c`], ', ');
    expect(compile(sql`(${list})`)).toEqual({ text: '(a, $1::int, c)', values: [1] });
    expect(compile(sql`x${sql.join([], ' and ')}y`).text).toBe('xy');
  });

  it('refuses to interpolate anything but a fragment or a value', () => {
    expect(() => sql`select ${'1; drop table x' as never}`).toThrow(/fragment or sql.value/);
  });

  it('a scoped compile refuses a statement without its scope\'s mark', () => {
    const scope = {};
    const predicate = sql.scoped(scope, sql`t.tenant_id = ${sql.value('t1', 'text')}`);
    expect(() => compile(sql`select 1`, { scope })).toThrow(/without its scope/);
    expect(() => compile(sql`select 1 where ${sql.scoped({}, sql`true`)}`, { scope })).toThrow(/without its scope/);
    expect(compile(sql`select 1 where (${sql`${predicate}`})`, { scope }).values).toEqual(['t1']);
  });

  it('sql.text renders a fragment without values, and refuses one with values', () => {
    expect(sql.text(sql`${sql.ident('a')}.${sql.ident('b')}`)).toBe('"a"."b"');
    expect(() => sql.text(sql`${sql.value(1)}`)).toThrow(/binds values/);
  });
});
