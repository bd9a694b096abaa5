/** Bad command-line usage: exit 2. */
export class UsageError extends Error {}
/** A problem in the operator's input (schema, output folder, migrations, env): exit 1, one line. */
export class UserError extends Error {}
