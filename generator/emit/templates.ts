/**
 * Handlebars templates from templates/*.hbs. Templates only interpolate and
 * loop: emitters hand them complete view-models (sorted, names resolved,
 * SQL and TS fragments already rendered).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Handlebars from 'handlebars';
import { PACKAGE_ROOT } from '../../runtime/package.ts';

export const TEMPLATE_NAMES = [
  'migration.sql',
  'projection.sql',
  'access.ts',
  'models.ts',
  'resolver-stub.ts',
  'custom-projections.ts',
  'resolvers-index.ts',
  'server.ts',
  'actions.ts',
  'workflows.ts',
  'client.ts',
] as const;
export type TemplateName = (typeof TEMPLATE_NAMES)[number];

const TEMPLATE_DIR = join(PACKAGE_ROOT, 'templates');
const compiled = new Map<TemplateName, Handlebars.TemplateDelegate>();

export function render(name: TemplateName, view: object): string {
  let template = compiled.get(name);
  if (!template) {
    const text = readFileSync(join(TEMPLATE_DIR, `${name}.hbs`), 'utf8');
    template = Handlebars.compile(text, { noEscape: true, strict: true });
    compiled.set(name, template);
  }
  return template(view);
}
