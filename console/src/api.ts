/**
 * The console's one door to the service: the public API, with the user's
 * token. The access token lives in this module's memory only; a reload gets a
 * new one from the refresh cookie (HttpOnly, scoped to /auth) that the login
 * asked for. The platform operator's tenant choice is sent as X-Tenant-ID.
 */
export interface User { id: string; email: string; role: string; tenant_id?: string | null }

export class ApiError extends Error {
  constructor(readonly status: number, message: string, readonly field: string | null = null,
    readonly fields: Record<string, string> = {}) {
    super(message);
  }
}

let token: string | null = null;
let user: User | null = null;
let tenant: string | null = sessionStorage.getItem('svc-console:tenant');
const listeners = new Set<() => void>();

export const session = {
  get user() { return user; },
  get token() { return token; },
  get tenant() { return tenant; },
  /** The role's tenant-less Admin may act in any tenant (CONTRACT section 8). */
  get isOperator() { return user?.role === 'Admin' && !user.tenant_id; },
  setTenant(value: string | null) {
    tenant = value && value.trim() !== '' ? value.trim() : null;
    if (tenant) sessionStorage.setItem('svc-console:tenant', tenant);
    else sessionStorage.removeItem('svc-console:tenant');
    emit();
  },
  subscribe(listener: () => void) { listeners.add(listener); return () => listeners.delete(listener); },
};

function emit() { for (const listener of listeners) listener(); }

const ROLES = ['Admin', 'Manager', 'Sales', 'Support', 'Viewer'];

/** The auth routes answer roles in lower case; the IR's access rules name them capitalised. */
const roleName = (role: string) => ROLES.find((known) => known.toLowerCase() === role.toLowerCase()) ?? role;

/** The access token's claims (read, not verified: the server verifies it on every call). */
function claimsOf(jwt: string): { sub?: string; role?: string; tid?: string | null; email?: string | null } {
  try {
    const part = jwt.split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
    return JSON.parse(atob(part.padEnd(part.length + ((4 - (part.length % 4)) % 4), '='))) as ReturnType<typeof claimsOf>;
  } catch {
    return {};
  }
}

/** The user from the login or refresh answer and the token's claims (its tenant): no extra round trip. */
function signedIn(body: { token: string; user: User }) {
  token = body.token;
  const claims = claimsOf(body.token);
  user = { ...body.user, role: roleName(claims.role ?? body.user.role), tenant_id: claims.tid ?? null };
  emit();
}

export async function login(email: string, password: string): Promise<void> {
  const response = await fetch('/auth/login', {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password, cookie: true }),
  });
  if (!response.ok) throw await errorOf(response);
  signedIn(await response.json());
}

/** A reload: the refresh cookie, if any, gives a new access token. False when there is no session. */
export async function resume(): Promise<boolean> {
  const response = await fetch('/auth/refresh', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  if (!response.ok) return false;
  signedIn(await response.json());
  return true;
}

export async function logout(): Promise<void> {
  try {
    await fetch('/auth/logout', { method: 'POST', headers: token ? { authorization: `Bearer ${token}` } : {} });
  } finally {
    token = null;
    user = null;
    emit();
  }
}

/** `global`: the call is about the platform, not a tenant (the list of instances): no X-Tenant-ID even when one is chosen. */
function headers(json: boolean, global = false): Record<string, string> {
  const out: Record<string, string> = {};
  if (json) out['content-type'] = 'application/json';
  if (token) out.authorization = `Bearer ${token}`;
  if (tenant && session.isOperator && !global) out['x-tenant-id'] = tenant;
  return out;
}

async function errorOf(response: Response): Promise<ApiError> {
  const body = await response.json().catch(() => ({})) as { error?: string; message?: string; field?: string };
  return new ApiError(response.status, body.error ?? body.message ?? `HTTP ${response.status}`, body.field ?? null);
}

/** One retry after a refresh when the access token expired. */
async function send(make: () => Promise<Response>): Promise<Response> {
  const response = await make();
  if (response.status === 401 && token && await resume()) return make();
  if (response.status === 401) { token = null; user = null; emit(); }
  return response;
}

export async function rest<T>(method: string, path: string, body?: unknown, options: { global?: boolean } = {}): Promise<T> {
  const response = await send(() => fetch(path, {
    method, headers: headers(body !== undefined, options.global), body: body === undefined ? undefined : JSON.stringify(body),
  }));
  if (!response.ok) throw await errorOf(response);
  if (response.status === 204) return undefined as T;
  return response.json() as Promise<T>;
}

export async function upload(file: File): Promise<unknown> {
  const form = new FormData();
  form.append('file', file);
  const response = await send(() => fetch('/media', { method: 'POST', headers: headers(false), body: form }));
  if (!response.ok) throw await errorOf(response);
  return response.json();
}

interface GqlError { message: string; extensions?: { code?: string; field?: string } }

export async function gql<T>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const response = await send(() => fetch('/graphql', { method: 'POST', headers: headers(true), body: JSON.stringify({ query, variables }) }));
  const body = await response.json().catch(() => ({})) as { data?: T; errors?: GqlError[] };
  if (body.errors?.length) {
    const fields: Record<string, string> = {};
    for (const e of body.errors) if (e.extensions?.field) fields[e.extensions.field] = e.message;
    const first = body.errors[0];
    const status = first.extensions?.code === 'FORBIDDEN' ? 403 : first.extensions?.code === 'NOT_FOUND' ? 404
      : first.extensions?.code === 'UNAUTHORIZED' ? 401 : first.extensions?.code === 'VALIDATION_ERROR' ? 400 : response.status;
    throw new ApiError(status, body.errors.map((e) => e.message).join('; '), first.extensions?.field ?? null, fields);
  }
  if (!response.ok) throw new ApiError(response.status, `HTTP ${response.status}`);
  return body.data as T;
}

/** A bytes URL the browser can show (an <img> cannot send the token): fetched, then an object URL. */
export async function blobUrl(path: string): Promise<string> {
  const response = await send(() => fetch(path, { headers: headers(false) }));
  if (!response.ok) throw await errorOf(response);
  return URL.createObjectURL(await response.blob());
}
