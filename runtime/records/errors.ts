/**
 * Errors a records caller may see. Each carries a GraphQL error code; a
 * validation error also names the offending field (CONTRACT section 4).
 * Anything that is not a RecordError is a bug: logged and masked.
 */
export const ERROR_CODES = ['NOT_FOUND', 'UNAUTHORIZED', 'FORBIDDEN', 'VALIDATION_ERROR', 'INTERNAL_ERROR'] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

export class RecordError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** The input field at fault (`name`, `address.city`, `where.stage`). */
    readonly field?: string,
  ) {
    super(message);
    this.name = 'RecordError';
  }
}

export const invalid = (field: string, message: string) => new RecordError('VALIDATION_ERROR', message, field);
export const notFound = (model: string, id: string) => new RecordError('NOT_FOUND', `${model} ${id} not found`);
export const forbidden = (message = 'forbidden') => new RecordError('FORBIDDEN', message);

/** Postgres SQLSTATEs that are the caller's fault, not ours. */
const SQLSTATE = {
  uniqueViolation: '23505',
  foreignKeyViolation: '23503',
  notNullViolation: '23502',
  checkViolation: '23514',
  invalidText: '22P02',
  datetimeOverflow: '22008',
  invalidDatetime: '22007',
  numericOutOfRange: '22003',
} as const;

/**
 * Turns a database error caused by the input into a safe RecordError (no SQL
 * text, only the column name); returns null for anything else.
 */
export function fromDatabaseError(error: unknown, columnToField: (column: string) => string | undefined): RecordError | null {
  const e = error as { code?: string; column?: string; constraint?: string };
  if (!e || typeof e.code !== 'string') return null;
  const field = (e.column && columnToField(e.column)) || fieldOfConstraint(e.constraint, columnToField);
  switch (e.code) {
    case SQLSTATE.uniqueViolation:
      return invalid(field ?? 'data', `${field ?? 'a value'} must be unique`);
    case SQLSTATE.foreignKeyViolation:
      return invalid(field ?? 'id', 'the record is referenced by, or refers to, a record that does not allow this');
    case SQLSTATE.notNullViolation:
      return invalid(field ?? 'data', `${field ?? 'a field'} is required`);
    case SQLSTATE.checkViolation:
      return invalid(field ?? 'data', `${field ?? 'a value'} is not allowed`);
    case SQLSTATE.invalidText:
    case SQLSTATE.datetimeOverflow:
    case SQLSTATE.invalidDatetime:
    case SQLSTATE.numericOutOfRange:
      return invalid(field ?? 'data', `${field ?? 'a value'} has an invalid value`);
    default:
      return null;
  }
}

/** Constraint names follow `<table>_<column>_<suffix>` (generator/ir/naming.ts). */
function fieldOfConstraint(constraint: string | undefined, columnToField: (column: string) => string | undefined) {
  if (!constraint) return undefined;
  const parts = constraint.split('_');
  for (let start = 1; start < parts.length - 1; start++) {
    const field = columnToField(parts.slice(start, -1).join('_'));
    if (field) return field;
  }
  return undefined;
}
