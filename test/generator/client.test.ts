/**
 * The generated client.ts is typed by the schema: a usage example compiles,
 * and the same example with a wrong field name (in `where`, `orderBy`,
 * `include` or `create`) does not, with tsc naming the field.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES, REPO_ROOT, buildOk, tempDir } from './helpers.ts';

const run = promisify(execFile);

const USAGE = `import { createClient, ClientError, SubscriptionError, type WithIncluded } from './client.ts';
import type { Company, Deal, DealStage } from './models.ts';

export async function usage(token: string): Promise<string> {
  const api = createClient({ url: 'http://localhost:3000', token });
  const acme: Company = await api.Company.create({ name: 'Acme', employees: 12, address: { city: 'Lyon', country: 'FR' } });
  const deal = await api.Deal.create({ title: 'Big one', amount: 1000, companyId: acme.id, closeDate: new Date() });
  const stage: DealStage = deal.stage;
  await api.Deal.update(deal.id, { stage: 'won' });
  const rows = await api.Company.records({
    where: { OR: [{ name: { startsWith: 'Ac' } }, { employees: { gte: 100 } }], NOT: { email: { isNull: true } } },
    orderBy: { name: 'ASC' },
    limit: 20,
    include: ['contacts'],
  });
  const contacts: number = rows[0].contacts.length;
  const page = await api.Deal.paginatedRecords({ where: { stage: { in: ['won', 'lost'] } }, first: 10, include: ['company'] });
  const company: Company = page.items[0].company;
  const next: string | null = page.pageInfo.endCursor;
  const one: WithIncluded<'Deal', never> | null = await api.Deal.record(deal.id);
  const stop = api.Deal.subscribe((change) => {
    const model: 'Deal' = change.modelName;
    return model;
  }, { after: 'x', onError: (e: SubscriptionError) => console.error(e.after, e.cause) });
  stop();
  await api.close();
  const error = new ClientError(400, [{ message: 'm', code: 'VALIDATION_ERROR', field: 'name' }]);
  return \`\${stage} \${contacts} \${company.name} \${next} \${one?.title} \${error.errors[0].field}\`;
}

export type Kept = Deal;
`;

/** One mistake each, replacing a line of USAGE; tsc must fail naming the wrong name. */
const MISTAKES: { name: string; from: string; to: string; says: RegExp }[] = [
  { name: 'a field in where', from: "{ name: { startsWith: 'Ac' } }", to: "{ nmae: { startsWith: 'Ac' } }", says: /'nmae' does not exist/ },
  { name: 'a field in orderBy', from: "orderBy: { name: 'ASC' }", to: "orderBy: { title: 'ASC' }", says: /'title' does not exist/ },
  { name: 'a relation in include', from: "include: ['contacts']", to: "include: ['contact']", says: /"contact"' is not assignable/ },
  { name: 'a field in create', from: "{ name: 'Acme', employees: 12,", to: "{ name: 'Acme', employes: 12,", says: /'employes' does not exist/ },
  { name: 'a missing required field', from: "{ title: 'Big one', amount: 1000,", to: "{ title: 'Big one',", says: /'amount' is missing/ },
  { name: 'an enum value', from: "{ stage: 'won' }", to: "{ stage: 'wn' }", says: /"wn"' is not assignable/ },
  { name: 'a relation not included', from: 'const contacts: number = rows[0].contacts.length;', to: 'const contacts: number = rows[0].deals.length;', says: /Object is possibly 'undefined'/ },
];

let outDir: string;

beforeAll(async () => {
  outDir = tempDir('client-tsc');
  await buildOk({ schemaPath: join(FIXTURES, 'crm', 'schema.ts'), outDir });
  mkdirSync(join(outDir, 'node_modules'));
  symlinkSync(REPO_ROOT, join(outDir, 'node_modules', 'svc-gen'), 'dir');
  symlinkSync(join(REPO_ROOT, 'node_modules', 'graphql-ws'), join(outDir, 'node_modules', 'graphql-ws'), 'dir');
});

async function tsc(example: string): Promise<string> {
  writeFileSync(join(outDir, 'usage.ts'), example);
  const bin = join(REPO_ROOT, 'node_modules', '.bin', 'tsc');
  const result = await run(bin, ['--noEmit', '-p', outDir, '--customConditions', 'svc-gen-source']).catch((error: { stdout: string; stderr: string }) => error);
  return `${result.stdout}${result.stderr}`;
}

describe('generated client.ts', () => {
  it('compiles a usage example written against the schema', async () => {
    expect(await tsc(USAGE)).toBe('');
  });

  it.each(MISTAKES)('fails to compile with $name wrong', async ({ from, to, says }) => {
    expect(USAGE).toContain(from);
    const output = await tsc(USAGE.replace(from, to));
    expect(output).toMatch(/usage\.ts\(\d+,\d+\): error TS\d+/);
    expect(output).toMatch(says);
  });
});
