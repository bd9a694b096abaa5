/** Templates and conditions at run time (runtime/workflows/render.ts, http.ts); event conditions: test/actions/conditions.test.ts. */
import { describe, expect, it } from 'vitest';
import { allowedOrigin } from '../../runtime/workflows/http.ts';
import { evaluate, render, type RenderScope } from '../../runtime/workflows/render.ts';

const scope: RenderScope = {
  trigger: { record: { id: 'd1', amount: 12, tags: ['a', 'b'], owner: null }, actor: { id: 'u1', role: 'Sales' } },
  steps: { invoice: { result: { ok: true, invoiceId: 'INV-1', lines: [{ sku: 'x' }] } } },
  vars: { count: 0, note: '$& $1' },
};

describe('render', () => {
  it('keeps the type of a whole-string template and writes text inside a longer one', () => {
    expect(render('{{trigger.record.amount}}', scope)).toBe(12);
    expect(render('{{ steps.invoice.result.ok }}', scope)).toBe(true);
    expect(render('{{steps.invoice.result.lines.0.sku}}', scope)).toBe('x');
    expect(render('deal {{trigger.record.id}} for {{trigger.record.amount}} by {{trigger.actor.id}}', scope)).toBe('deal d1 for 12 by u1');
    expect(render('tags={{trigger.record.tags}} owner=[{{trigger.record.owner}}]', scope)).toBe('tags=["a","b"] owner=[]');
    expect(render({ a: ['{{vars.count}}', { b: '{{vars.note}}!' }], n: 3, z: null }, scope)).toEqual({ a: [0, { b: '$& $1!' }], n: 3, z: null });
  });

  it('renders a path that leads nowhere as null, and never reaches a prototype', () => {
    expect(render('{{trigger.record.missing}}', scope)).toBeNull();
    expect(render('{{trigger.record.id.length}}', scope)).toBeNull();
    expect(render('{{vars.constructor}}', scope)).toBeNull();
    expect(render('{{trigger.__proto__}}', scope)).toBeNull();
  });

  it('refuses code inside braces', () => {
    expect(() => render('{{ process.exit() }}', scope)).toThrow(/not a template path/);
  });
});

describe('conditions', () => {
  const holds = (op: string, ...args: unknown[]) => evaluate({ kind: 'condition', op: op as never, args: args as never }, scope);

  it('compare values of one type and are false across types', () => {
    expect(holds('eq', '{{steps.invoice.result.ok}}', true)).toBe(true);
    expect(holds('eq', { a: [1, 2] }, { a: [1, 2] })).toBe(true);
    expect(holds('ne', '{{trigger.record.amount}}', '12')).toBe(true);
    expect(holds('gt', '{{trigger.record.amount}}', 10)).toBe(true);
    expect(holds('lte', '{{trigger.record.amount}}', 12)).toBe(true);
    expect(holds('lt', '{{trigger.record.amount}}', '20')).toBe(false);
    expect(holds('gt', '{{trigger.record.owner}}', 0)).toBe(false);
    expect(holds('in', '{{trigger.actor.role}}', ['Sales', 'Manager'])).toBe(true);
    expect(holds('in', 'x', 'not a list')).toBe(false);
    expect(holds('contains', '{{trigger.record.tags}}', 'b')).toBe(true);
    expect(holds('contains', 'invoice INV-1', 'INV')).toBe(true);
    expect(holds('exists', '{{trigger.record.owner}}')).toBe(false);
    expect(holds('exists', '{{vars.count}}')).toBe(true);
  });

  it('treat an unknown operator as an error, never as true', () => {
    expect(() => holds('matches', 'a', 'a')).toThrow(/unknown condition operator/);
    expect(() => holds('toString', 'a')).toThrow(/unknown condition operator/);
  });
});

describe('the http allowlist', () => {
  const allow = ['https://hooks.example.com', 'http://127.0.0.1:8080'];

  it('compares whole origins, after rendering', () => {
    expect(allowedOrigin('https://hooks.example.com/won?x=1', allow)).toEqual({ ok: true });
    expect(allowedOrigin('http://127.0.0.1:8080/a', allow)).toEqual({ ok: true });
    expect(allowedOrigin('https://hooks.example.com.evil.test/won', allow).ok).toBe(false);
    expect(allowedOrigin('http://hooks.example.com/won', allow).ok).toBe(false);
    expect(allowedOrigin('http://127.0.0.1:8081/a', allow).ok).toBe(false);
    expect(allowedOrigin('https://user:pw@hooks.example.com/', allow).ok).toBe(false);
    expect(allowedOrigin('file:///etc/passwd', allow).ok).toBe(false);
    expect(allowedOrigin('not a url', allow).ok).toBe(false);
  });
});
