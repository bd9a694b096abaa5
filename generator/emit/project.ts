/** server.ts, tsconfig.json and package.json: what makes DIR a project tsc and the runtime understand. */
import { render } from './templates.ts';

export function emitServer(schemaFile: string): string {
  return render('server.ts', { schemaFile });
}

export function emitTsconfig(): string {
  const config = {
    compilerOptions: {
      target: 'ES2023',
      lib: ['ES2023'],
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      strict: true,
      noEmit: true,
      allowImportingTsExtensions: true,
      verbatimModuleSyntax: true,
      resolveJsonModule: true,
      skipLibCheck: true,
    },
    include: ['**/*.ts'],
    exclude: ['node_modules'],
  };
  return `${JSON.stringify(config, null, 2)}\n`;
}

export function emitPackageJson(name: string): string {
  const pkg = { name: `${name}-service`, private: true, type: 'module', dependencies: { 'svc-gen': '*' } };
  return `${JSON.stringify(pkg, null, 2)}\n`;
}
