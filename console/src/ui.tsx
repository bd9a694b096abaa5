/** Small shared pieces: links, loading of API data, errors shown as text (never as HTML). */
import type { ComponentChildren } from 'preact';
import { useCallback, useLayoutEffect, useState } from 'preact/hooks';
import { ApiError } from './api.ts';
import { onLink } from './router.ts';

export function Link(props: { href: string; children: ComponentChildren; class?: string; 'aria-current'?: 'page' }) {
  const href = props.href.startsWith('/console') ? props.href : `/console${props.href === '/' ? '' : props.href}`;
  return <a href={href} class={props.class} onClick={onLink} aria-current={props['aria-current']}>{props.children}</a>;
}

export interface Loaded<T> { data: T | null; error: ApiError | null; loading: boolean; reload: () => void }

/** Calls started before their view rendered (a cold load's first page, main.tsx), by their useApi key. */
const preloaded = new Map<string, { answer: Promise<unknown>; at: number }>();
/** An early answer older than this is not taken (its view did not mount then): the view asks again. */
const PRELOAD_FRESH_MS = 5_000;

/** Starts `load` now; the view that mounts with `key` soon after takes its answer instead of calling again. */
export function preload(key: string, load: () => Promise<unknown>): void {
  const answer = load();
  answer.catch(() => undefined); // the view reports the error, if it mounts
  preloaded.set(key, { answer, at: performance.now() });
}

function takePreloaded<T>(key: string): Promise<T> | undefined {
  const entry = preloaded.get(key);
  preloaded.delete(key);
  return entry && performance.now() - entry.at < PRELOAD_FRESH_MS ? entry.answer as Promise<T> : undefined;
}

/**
 * Runs `load` now and whenever `key` changes. Started from a layout effect,
 * right after the render that mounts the view: a plain effect waits for the
 * next animation frame (up to 100 ms in Preact), and a cold load chains two
 * such waits before its first API call (measured in bench/console/run.ts).
 */
export function useApi<T>(load: () => Promise<T>, key: string): Loaded<T> {
  const [state, setState] = useState<{ data: T | null; error: ApiError | null; loading: boolean }>({ data: null, error: null, loading: true });
  const [tick, setTick] = useState(0);
  useLayoutEffect(() => {
    let live = true;
    setState((s) => (s.loading ? s : { ...s, loading: true }));
    (takePreloaded<T>(key) ?? load()).then(
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

/** One formatter for every timestamp: `toLocaleString` builds a new one per call (a list of 50 jobs shows 100 times). */
const LOCAL_TIME = new Intl.DateTimeFormat(undefined, { dateStyle: 'short', timeStyle: 'medium' });

export function Time({ at }: { at: string | null | undefined }) {
  if (!at) return <span class="muted">–</span>;
  return <time dateTime={at} title={at}>{LOCAL_TIME.format(new Date(at))}</time>;
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
