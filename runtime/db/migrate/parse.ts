/**
 * The step format of migration files (docs/adr/019-online-migrations.md):
 * a header of comment lines, then steps, each opened by a line
 *
 *   -- step N transactional|online|backfill|preflight ["table" [by "column"]]: description
 *
 * `by "column"` (backfill only) names the keyset column of a table without an
 * `id` (the default); it need not be unique, as a batch takes every row of
 * its last value.
 *
 * A file without any step line is one transactional step (every migration
 * written before the format, every runtime migration). Pure functions: no I/O.
 */

export type StepKind = 'transactional' | 'online' | 'backfill' | 'preflight';

export interface Step {
  /** From 1, increasing by 1. */
  readonly number: number;
  readonly kind: StepKind;
  /** The quoted table name of the step line (required for `backfill`). */
  readonly table: string | null;
  /** A backfill's keyset column (`by "column"`); null: `id`. */
  readonly key?: string | null;
  readonly description: string;
  /** The lines after the step line, up to the next step line or the end of the file. */
  readonly body: string;
  /** 1-based line of the step line in the file (0 for a file without steps). */
  readonly line: number;
}

export interface ParsedMigration {
  readonly steps: readonly Step[];
  /** `-- contract of NNNN: text` in the header: the expand migration's number, else null. */
  readonly contractOf: string | null;
}

/** A malformed file: the message names the line. */
export class StepFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StepFormatError';
  }
}

const STEP_LINE = /^-- step (\d+) (transactional|online|backfill|preflight)(?: "([a-z0-9_]+)"(?: by "([a-z0-9_]+)")?)?: (.+)$/;
/** Lines that look like step lines but do not match the grammar are refused, not read as comments. */
const STEP_LIKE = /^--\s*step\s+\d/i;
const CONTRACT_LINE = /^-- contract of (\d+): (.+)$/;

export function parseMigration(text: string): ParsedMigration {
  const lines = text.split('\n');
  const starts: Array<{ index: number; match: RegExpMatchArray }> = [];
  lines.forEach((line, index) => {
    const match = STEP_LINE.exec(line.replace(/\r$/, ''));
    if (match) starts.push({ index, match });
    else if (STEP_LIKE.test(line)) throw new StepFormatError(`line ${index + 1}: not a step line of the format: ${line.trim()}`);
  });
  const header = lines.slice(0, starts.length > 0 ? starts[0].index : lines.length);
  const contract = header.map((line) => CONTRACT_LINE.exec(line.replace(/\r$/, ''))).find((m) => m !== null);
  const contractOf = contract ? contract[1] : null;
  if (starts.length === 0) {
    return { steps: [{ number: 1, kind: 'transactional', table: null, description: 'the whole file', body: text, line: 0 }], contractOf };
  }
  const steps = starts.map(({ index, match }, i): Step => {
    const end = i + 1 < starts.length ? starts[i + 1].index : lines.length;
    const step: Step = {
      number: Number(match[1]), kind: match[2] as StepKind, table: match[3] ?? null, key: match[4] ?? null,
      description: match[5].trim(), body: lines.slice(index + 1, end).join('\n'), line: index + 1,
    };
    checkStep(step, i + 1);
    return step;
  });
  return { steps, contractOf };
}

function checkStep(step: Step, expected: number): void {
  const at = `line ${step.line}: step ${step.number}`;
  if (step.number !== expected) throw new StepFormatError(`${at}: steps are numbered from 1 by 1, expected step ${expected}`);
  const statements = splitStatements(step.body);
  if (statements.length === 0) throw new StepFormatError(`${at}: the step has no statement`);
  if (step.kind === 'transactional') return;
  if (statements.length !== 1) throw new StepFormatError(`${at}: a ${step.kind} step is exactly one statement, found ${statements.length}`);
  if (step.kind === 'backfill') {
    if (step.table === null) throw new StepFormatError(`${at}: a backfill step names its table: -- step N backfill "table": ...`);
    parseBackfill(statements[0], step.table, at);
  } else if (step.key) {
    throw new StepFormatError(`${at}: only a backfill step names a keyset column (by "column")`);
  }
  if (step.kind === 'preflight' && !/^(select|with)\b/i.test(statements[0])) {
    throw new StepFormatError(`${at}: a preflight step is one select returning the offending rows`);
  }
}

export interface Backfill {
  /** `update "table" set ...` up to (not including) the top-level `where`. */
  readonly head: string;
  /** The original condition, without `where` and the final semicolon. */
  readonly condition: string;
}

/** Splits a backfill's `update "table" set ... where <condition>;` at its top-level `where`. */
export function parseBackfill(statement: string, table: string, at = 'backfill'): Backfill {
  const text = stripComments(statement).trim().replace(/;\s*$/, '');
  const target = new RegExp(`^update\\s+(?:only\\s+)?(?:"${table}"|${table})\\s+set\\s`, 'i');
  if (!target.test(text)) throw new StepFormatError(`${at}: a backfill is one update "${table}" set ... where ...;`);
  const where = topLevelKeyword(text, 'where');
  if (where < 0) throw new StepFormatError(`${at}: a backfill's update needs a where clause (the rows still to fill)`);
  return { head: text.slice(0, where).trimEnd(), condition: text.slice(where + 'where'.length).trim() };
}

/** Index of `keyword` outside quotes, comments and parentheses, as a whole word; -1 if none. */
function topLevelKeyword(text: string, keyword: string): number {
  let depth = 0;
  for (const token of scan(text)) {
    if (token.kind !== 'code') continue;
    for (let i = token.start; i < token.end; i++) {
      const c = text[i];
      if (c === '(') depth++;
      else if (c === ')') depth--;
      else if (depth === 0 && text.slice(i, i + keyword.length).toLowerCase() === keyword
        && !/\w/.test(text[i - 1] ?? ' ') && !/\w/.test(text[i + keyword.length] ?? ' ')) return i;
    }
  }
  return -1;
}

interface Token { readonly kind: 'code' | 'string' | 'comment'; readonly start: number; readonly end: number }

/** SQL text as runs of code, quoted text ('...', "...", $tag$...$tag$) and comments. */
function* scan(text: string): Generator<Token> {
  let i = 0;
  let code = 0;
  const flush = function* (end: number): Generator<Token> {
    if (end > code) yield { kind: 'code', start: code, end };
  };
  while (i < text.length) {
    const end = quotedEnd(text, i);
    if (end === i) { i++; continue; }
    yield* flush(i);
    yield { kind: text[i] === '-' || text[i] === '/' ? 'comment' : 'string', start: i, end };
    i = end;
    code = end;
  }
  yield* flush(text.length);
}

/** If a comment or quoted text starts at `i`, the index after it; else `i`. */
function quotedEnd(text: string, i: number): number {
  const c = text[i];
  const rest = (from: number, stop: string) => {
    const at = text.indexOf(stop, from);
    return at < 0 ? text.length : at + stop.length;
  };
  if (c === '-' && text[i + 1] === '-') return rest(i + 2, '\n');
  if (c === '/' && text[i + 1] === '*') return rest(i + 2, '*/');
  if (c === "'" || c === '"') {
    let j = i + 1;
    while (j < text.length) {
      if (text[j] === c && text[j + 1] === c) j += 2;
      else if (text[j] === c) return j + 1;
      else j++;
    }
    return text.length;
  }
  if (c === '$') {
    const tag = /^\$[A-Za-z_]*\$/.exec(text.slice(i));
    if (tag) return rest(i + tag[0].length, tag[0]);
  }
  return i;
}

function stripComments(text: string): string {
  let out = '';
  for (const token of scan(text)) out += token.kind === 'comment' ? ' ' : text.slice(token.start, token.end);
  return out;
}

/** The statements of `text` (comments removed, trimmed, without their semicolon), empty ones dropped. */
export function splitStatements(text: string): string[] {
  const statements: string[] = [];
  let current = '';
  for (const token of scan(text)) {
    if (token.kind === 'comment') { current += ' '; continue; }
    const part = text.slice(token.start, token.end);
    if (token.kind === 'string') { current += part; continue; }
    const pieces = part.split(';');
    current += pieces[0];
    for (const piece of pieces.slice(1)) {
      statements.push(current);
      current = piece;
    }
  }
  statements.push(current);
  return statements.map((s) => s.trim()).filter((s) => s.length > 0);
}
