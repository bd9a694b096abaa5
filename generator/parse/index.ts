/**
 * Stage 1: schema.ts text -> raw facts with source locations. Syntax only:
 * an in-memory ts-morph project, no type checker, schema.ts never executed.
 */
import { Node, Project, type InterfaceDeclaration, type PropertySignature, type SourceFile } from 'ts-morph';
import { diagnostic, type Diagnostic } from '../diagnostics.ts';
import { readAutomation } from './automation.ts';
import { readConfig } from './config.ts';
import type { RawAlias, RawField, RawInterface, RawSchema } from './facts.ts';
import { readTags } from './jsdoc.ts';
import { readType, stringLiteralUnion } from './type-node.ts';

export type * from './facts.ts';

let project: Project | undefined;

/** `file` is how diagnostics name the schema (e.g. `schema.ts` or the path as given). */
export function parseSchemaSource(text: string, file: string): RawSchema {
  project ??= new Project({ useInMemoryFileSystem: true, skipAddingFilesFromTsConfig: true, compilerOptions: { noLib: true, noResolve: true } });
  const source = project.createSourceFile('/schema.ts', text, { overwrite: true });
  const diagnostics: Diagnostic[] = syntaxErrors(project, source, file);
  const interfaces = source.getInterfaces().filter((i) => i.isExported()).map((i) => readInterface(i, file, diagnostics));
  const aliases = readAliases(source, file);
  const models = readConfig(source, file, diagnostics);
  const { actions, workflows } = readAutomation(source, file, diagnostics);
  return { file, interfaces, aliases, models, actions, workflows, diagnostics, schemaImports: readSchemaImports(source) };
}

/** `import { type Media as Avatar } from 'svc-gen/schema'` -> { Media: 'Avatar' }. */
function readSchemaImports(source: SourceFile): Record<string, string> {
  const names: Record<string, string> = {};
  for (const declaration of source.getImportDeclarations()) {
    if (declaration.getModuleSpecifierValue() !== 'svc-gen/schema') continue;
    for (const named of declaration.getNamedImports()) {
      names[named.getName()] = named.getAliasNode()?.getText() ?? named.getName();
    }
  }
  return names;
}

/** Syntax only: no type checking, no imports resolved. */
function syntaxErrors(project: Project, source: SourceFile, file: string): Diagnostic[] {
  return project
    .getProgram()
    .getSyntacticDiagnostics(source)
    .map((d) => {
      const text = d.getMessageText();
      const message = typeof text === 'string' ? text : text.getMessageText();
      return diagnostic('SYNTAX_ERROR', { file, line: d.getLineNumber() ?? 1 }, `syntax error: ${message}`);
    });
}

function readInterface(node: InterfaceDeclaration, file: string, diagnostics: Diagnostic[]): RawInterface {
  const name = node.getName();
  if (node.getExtends().length > 0 || node.getTypeParameters().length > 0) {
    diagnostics.push(
      diagnostic('UNSUPPORTED_DECLARATION', { file, line: node.getStartLineNumber() }, `interface ${name}: extends and type parameters are not supported; list the fields`),
    );
  }
  for (const member of node.getMembers()) {
    if (!Node.isPropertySignature(member)) {
      const what = member.getKindName().replace(/(Signature|Declaration)$/, '').toLowerCase();
      diagnostics.push(diagnostic('UNSUPPORTED_DECLARATION', { file, line: member.getStartLineNumber() }, `${name}: a ${what} member is not supported; use plain fields`));
    }
  }
  const fields: RawField[] = node.getProperties().map((p) => ({
    name: propertyName(p),
    optional: p.hasQuestionToken(),
    type: readType(p.getTypeNode()),
    tags: readTags(p.getJsDocs(), file),
    at: { file, line: p.getStartLineNumber() },
  }));
  return { kind: 'interface', name, fields, at: { file, line: node.getStartLineNumber() } };
}

function propertyName(p: PropertySignature): string {
  const nameNode = p.getNameNode();
  return Node.isStringLiteral(nameNode) ? nameNode.getLiteralValue() : nameNode.getText();
}

function readAliases(source: SourceFile, file: string): RawAlias[] {
  return source
    .getTypeAliases()
    .filter((a) => a.isExported())
    .map((a) => {
      const typeNode = a.getTypeNodeOrThrow();
      return { kind: 'alias', name: a.getName(), values: stringLiteralUnion(typeNode), text: typeNode.getText(), at: { file, line: a.getStartLineNumber() } };
    });
}
