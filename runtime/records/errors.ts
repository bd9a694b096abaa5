/**
 * Errors a records caller may see. Each carries a GraphQL error code; a
 * validation error also names the offending field (CONTRACT section 4).
 * Anything that is not a SafeError is a bug: logged and masked.
 */
import { SafeError, statusOfCode, type FieldError } from '../http/errors.ts';

export const ERROR_CODES = ['NOT_FOUND', 'UNAUTHORIZED', 'FORBIDDEN', 'VALIDATION_ERROR', 'INTERNAL_ERROR'] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

export class RecordError extends SafeError {
  declare readonly code: ErrorCode;

  /** `field`: the input field at fault (`name`, `address.city`, `where.stage`). */
  constructor(code: ErrorCode, message: string, field?: string, fieldErrors?: readonly FieldError[]) {
    super(statusOfCode(code), code, message, { field, fieldErrors });
    this.name = 'RecordError';
  }
}

/** A refused operation on a model: the audit log's denied entry names the model and what was attempted. */
export class AccessDenied extends RecordError {
  constructor(readonly model: string, readonly operation: string) {
    super('FORBIDDEN', `not allowed to ${operation} ${model}`);
    this.name = 'AccessDenied';
  }
}

export const invalid = (field: string, message: string) => new RecordError('VALIDATION_ERROR', message, field);

/** Several invalid fields at once; the first one is the error's own field and message. */
export function invalidFields(errors: readonly FieldError[]): RecordError {
  const [first] = errors;
  return new RecordError('VALIDATION_ERROR', first.message, first.field, errors);
}

/**
 * Runs each check, collecting the field errors of those that fail (a check
 * that already reports several contributes each); any other error is thrown
 * at once. Throws every collected field error together at the end.
 */
export class FieldErrors {
  private readonly errors: FieldError[] = [];

  check<T>(run: () => T): T | undefined {
    try {
      return run();
    } catch (error) {
      if (!(error instanceof SafeError) || error.code !== 'VALIDATION_ERROR' || error.fieldErrors.length === 0) throw error;
      this.errors.push(...error.fieldErrors);
      return undefined;
    }
  }

  add(field: string, message: string): void {
    this.errors.push({ field, message });
  }

  throwIfAny(): void {
    if (this.errors.length > 0) throw invalidFields(this.errors);
  }
}
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
