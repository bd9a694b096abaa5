/** Small shared pieces: links, loading of API data, errors shown as text (never as HTML). */
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { ApiError } from './api.ts';
import { onLink } from './router.ts';

export function Link(props: { href: string; children: ComponentChildren; class?: string; 'aria-current'?: 'page' }) {
  const href = props.href.startsWith('/console') ? props.href : `/console${props.href === '/' ? '' : props.href}`;
  return <a href={href} class={props.class} onClick={onLink} aria-current={props['aria-current']}>{props.children}</a>;
}

export interface Loaded<T> { data: T | null; error: ApiError | null; loading: boolean; reload: () => void }

/** Runs `load` now and whenever `key` changes. */
export function useApi<T>(load: () => Promise<T>, key: string): Loaded<T> {
  const [state, setState] = useState<{ data: T | null; error: ApiError | null; loading: boolean }>({ data: null, error: null, loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => { if (live) setState({ data, error: null, loading: false }); },
      (error) => { if (live) setState({ data: null, error: toApiError(error), loading: false }); },
    );
    return () => { live = false; };
  }, [key, tick]);
  const reload = useCallback(() => setTick((n) => n + 1), []);
  return { ...state, reload };
}

export function toApiError(error: unknown): ApiError {
  return error instanceof ApiError ? error : new ApiError(0, error instanceof Error ? error.message : String(error));
}

export function ErrorNote({ error }: { error: ApiError | null }) {
  if (!error) return null;
  const prefix = error.status === 403 ? 'Forbidden (403): ' : error.status === 404 ? 'Not found (404): ' : error.status ? `Error ${error.status}: ` : '';
  return <p class="error" role="alert">{prefix}{error.message}</p>;
}

export function Loading({ loading }: { loading: boolean }) {
  return loading ? <p class="muted" aria-live="polite">Loading…</p> : null;
}

/** Any JSON value as indented text (a <pre>, never markup). */
export function Json({ value }: { value: unknown }) {
  return <pre class="json">{JSON.stringify(value, null, 2)}</pre>;
}

export function Time({ at }: { at: string | null | undefined }) {
  if (!at) return <span class="muted">–</span>;
  return <time dateTime={at} title={at}>{new Date(at).toLocaleString()}</time>;
}

export function cell(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** Runs an action, keeping its error for display; resolves true on success. */
export function useAction(): { busy: boolean; error: ApiError | null; run: (action: () => Promise<unknown>) => Promise<boolean>; clear: () => void } {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const run = async (action: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await action();
      return true;
    } catch (e) {
      setError(toApiError(e));
      return false;
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, run, clear: () => setError(null) };
}
