/** server.ts, tsconfig.json, package.json and .gitignore: what makes DIR a project tsc, the runtime and git understand. */
import { render } from './templates.ts';
import { PACKAGE_VERSION, dependencyRange } from '../../runtime/package.ts';

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

/**
 * Depends on this release line of svc-gen (`^` + the generator's own version): what `npm install` resolves;
 * and on graphql-ws (the range svc-gen itself uses), which client.ts imports for subscriptions.
 */
export function emitPackageJson(name: string): string {
  const dependencies = { 'graphql-ws': dependencyRange('graphql-ws'), 'svc-gen': `^${PACKAGE_VERSION}` };
  const pkg = { name: `${name}-service`, private: true, type: 'module', dependencies };
  return `${JSON.stringify(pkg, null, 2)}\n`;
}

/**
 * `.svc/` holds what the CLI writes beside the project (the bundle `svc-gen
 * start` loads, see ADR 003): never reviewed, never committed.
 */
export function emitGitignore(): string {
  return '# Written by svc-gen start and svc-gen compile (the bundle start loads); not source.\n.svc/\n';
}
