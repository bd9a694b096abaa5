/** A migration that cannot be applied: the message names the file (and step), for the operator. */
export class MigrationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MigrationError';
  }
}
