/**
 * The template syntax of workflow values (CONTRACT section 12), shared by the
 * generator (which checks every path at build) and the engine (which renders
 * them): `{{ a.b.c }}`, a dotted path of names or indexes, nothing else.
 */

/** Roots a template path may start with. */
export const TEMPLATE_ROOTS = ['trigger', 'steps', 'vars'] as const;

export interface TemplateRef {
  /** `['trigger', 'record', 'id']` */
  readonly path: readonly string[];
  /** The text as written, braces included. */
  readonly text: string;
}

export type TemplateScan =
  | { readonly ok: true; readonly refs: readonly TemplateRef[]; readonly whole: boolean }
  | { readonly ok: false; readonly problem: string };

const SEGMENT = '[A-Za-z_$][\\w$]*|\\d+';
const PATH = new RegExp(`^\\s*((?:${SEGMENT})(?:\\.(?:${SEGMENT}))*)\\s*$`);

/**
 * The templates in a string. `whole` is true when the string is exactly one
 * template, which then keeps its value's type when rendered.
 */
export function scanTemplates(text: string): TemplateScan {
  const refs: TemplateRef[] = [];
  let rest = 0;
  for (;;) {
    const open = text.indexOf('{{', rest);
    if (open < 0) break;
    const close = text.indexOf('}}', open + 2);
    if (close < 0) return { ok: false, problem: `unclosed template in '${text}'` };
    const inner = text.slice(open + 2, close);
    const match = PATH.exec(inner);
    if (!match) return { ok: false, problem: `'{{${inner}}}' is not a template path (write {{trigger.record.id}}, no code)` };
    refs.push({ path: match[1].split('.'), text: text.slice(open, close + 2) });
    rest = close + 2;
  }
  const whole = refs.length === 1 && refs[0].text === text;
  return { ok: true, refs, whole };
}
