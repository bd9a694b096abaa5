/** Addresses are the state: the path picks the view, the query string holds filters, sort and page position. */
import { useEffect, useState } from 'preact/hooks';

const BASE = '/console';
const listeners = new Set<() => void>();

export function navigate(to: string, replace = false): void {
  const url = to.startsWith(BASE) ? to : `${BASE}${to}`;
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  for (const listener of listeners) listener();
}

addEventListener('popstate', () => { for (const listener of listeners) listener(); });

export interface Location { path: string; query: URLSearchParams }

/** The address as the views read it: the path under /console and the query string. */
export function currentLocation(): Location {
  return { path: location.pathname.slice(BASE.length) || '/', query: new URLSearchParams(location.search) };
}

export function useLocation(): Location {
  const [, setTick] = useState(0);
  useEffect(() => {
    const listener = () => setTick((n) => n + 1);
    listeners.add(listener);
    return () => { listeners.delete(listener); };
  }, []);
  return currentLocation();
}

/** The query string with `changes` applied (empty values removed). */
export function withQuery(path: string, query: URLSearchParams, changes: Record<string, string | null | undefined>): string {
  const next = new URLSearchParams(query);
  for (const [key, value] of Object.entries(changes)) {
    if (value === null || value === undefined || value === '') next.delete(key);
    else next.set(key, value);
  }
  const text = next.toString();
  return text ? `${path}?${text}` : path;
}

/** A same-app link: no page load, the address changes. */
export function onLink(event: MouseEvent): void {
  const anchor = (event.currentTarget as HTMLAnchorElement);
  if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
  event.preventDefault();
  navigate(anchor.getAttribute('href') ?? '/');
}
