/**
 * A record as the records API reads and returns it: JSON names to values. Its
 * own module, below everything in records that handles rows (include, triggers,
 * write, read, ...), so none of them imports another only for this type.
 */
export type Row = Record<string, unknown>;
