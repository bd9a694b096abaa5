/** Input rules of the auth routes: emails, passwords, roles. Failures are 400s naming the rule. */
import { ROLES, type Role } from '../ir/types.ts';
import { badRequest } from '../http/errors.ts';

/** Long enough for any real password, short enough that hashing it is no DoS. */
const MAX_PASSWORD_LENGTH = 1024;
// Deliberately simple: one @, no spaces, a dot in the domain. Deliverability is the mail server's concern.
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export interface PasswordPolicy {
  readonly minLength: number;
  readonly requireComplexity: boolean;
}

export function normaliseEmail(value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '') throw badRequest('email is required', { field: 'email' });
  const email = value.trim().toLowerCase();
  if (email.length > 254 || !EMAIL.test(email)) throw badRequest('email is not a valid address', { field: 'email' });
  return email;
}

export function requirePassword(value: unknown): string {
  if (typeof value !== 'string' || value === '') throw badRequest('password is required', { field: 'password' });
  if (value.length > MAX_PASSWORD_LENGTH) {
    throw badRequest(`password must be at most ${MAX_PASSWORD_LENGTH} characters`, { field: 'password', rule: 'max_length' });
  }
  return value;
}

/** A new password: PASSWORD_MIN_LENGTH, and letters and numbers when PASSWORD_REQUIRE_COMPLEXITY. */
export function checkNewPassword(value: unknown, policy: PasswordPolicy): string {
  const password = requirePassword(value);
  if ([...password].length < policy.minLength) {
    throw badRequest(`password must be at least ${policy.minLength} characters`, { field: 'password', rule: 'min_length' });
  }
  if (policy.requireComplexity && !(/\p{L}/u.test(password) && /\p{N}/u.test(password))) {
    throw badRequest('password must contain both letters and numbers', { field: 'password', rule: 'complexity' });
  }
  return password;
}

export function parseRole(value: unknown): Role {
  const role = typeof value === 'string' ? ROLES.find((known) => known.toLowerCase() === value.trim().toLowerCase()) : undefined;
  if (!role) throw badRequest(`role must be one of ${ROLES.join(', ')}`, { field: 'role' });
  return role;
}

export function optionalString(body: Record<string, unknown>, field: string, max = 200): string | null {
  const value = body[field];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || value.length > max) throw badRequest(`${field} must be a string of at most ${max} characters`, { field });
  return value.trim() || null;
}

export function jsonObject(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('expected a JSON object body');
  return body as Record<string, unknown>;
}
