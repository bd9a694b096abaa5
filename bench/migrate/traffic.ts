/**
 * The live traffic a migration must not stop: N client connections, each in a
 * loop of single-row reads and writes by random primary key (half and half),
 * every statement's start, end and outcome recorded.
 */
import pg from 'pg';

export interface Sample { readonly start: number; readonly end: number; readonly ok: boolean }

/** The id of row g, as the seed writes it: a 26-character, ulid-like text key. */
export const idOf = (g: number): string => g.toString(16).padStart(26, '0');

export interface Traffic {
  readonly samples: Sample[];
  /** Ends the loops; the connections stay open for the next change. */
  stop(): Promise<void>;
}

const TOO_MANY_CLIENTS = '53300';

/** A connection, retried while the shared server is out of connection slots. */
export async function connect(url: string, name: string): Promise<pg.Client> {
  for (let attempt = 1; ; attempt++) {
    const client = new pg.Client({ connectionString: url, application_name: name });
    client.on('error', () => undefined);
    try {
      await client.connect();
      return client;
    } catch (error) {
      if ((error as { code?: string }).code !== TOO_MANY_CLIENTS || attempt >= 60) throw error;
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  }
}

/** Loops of single-row reads and writes on `connections` until stopped. */
export function startTraffic(connections: readonly pg.Client[], rows: number): Traffic {
  const samples: Sample[] = [];
  let running = true;
  const loops = connections.map(async (client, c) => {
    for (let i = 0; running; i++) {
      const id = idOf(1 + Math.floor(Math.random() * rows));
      const start = performance.now();
      let ok = true;
      try {
        if ((i + c) % 2 === 0) await client.query('select * from "contact" where "id" = $1', [id]);
        else await client.query('update "contact" set "n" = "n" + 1 where "id" = $1', [id]);
      } catch {
        ok = false;
      }
      samples.push({ start, end: performance.now(), ok });
    }
  });
  return {
    samples,
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}

export interface Impact {
  /** The longest any client waited for one statement that ran during the window. */
  readonly worstWaitMs: number;
  /** When the worst wait began, in ms after `from` (to find the step that caused it in the runner's log). */
  readonly worstAtMs: number;
  /** The longest stretch in the window in which no client finished any statement. */
  readonly longestStallMs: number;
  readonly failed: number;
  readonly statements: number;
  /**
   * The worst wait of the statements that overlap none of `excluded` (the
   * server's forced checkpoints: other sessions' CREATE or DROP DATABASE on a
   * shared server), null when no window was given.
   */
  readonly worstOutsideMs: number | null;
}

/** A stretch of wall-clock time (epoch ms). */
export interface Window { readonly from: number; readonly to: number }

/** What the traffic felt between `from` and `to` (performance.now() times). */
export function impact(samples: readonly Sample[], from: number, to: number, excluded: readonly Window[] | null = null): Impact {
  const during = samples.filter((s) => s.end >= from && s.start <= to);
  const worst = during.reduce<Sample | null>((w, s) => (w === null || s.end - s.start > w.end - w.start ? s : w), null);
  const worstWaitMs = worst ? worst.end - worst.start : 0;
  const ends = during.map((s) => s.end).filter((end) => end >= from && end <= to).sort((a, b) => a - b);
  let longestStallMs = 0;
  let previous = from;
  for (const end of [...ends, to]) {
    longestStallMs = Math.max(longestStallMs, end - previous);
    previous = end;
  }
  const epoch = (t: number) => performance.timeOrigin + t;
  // Only the windows that overlap this one (a shared server's log holds thousands).
  const windows = excluded?.filter((w) => w.from < epoch(to) + 60_000 && w.to > epoch(from) - 60_000) ?? null;
  const outside = windows && during.filter((s) => !windows.some((w) => epoch(s.start) < w.to && epoch(s.end) > w.from));
  const worstOutsideMs = outside ? outside.reduce((w, s) => Math.max(w, s.end - s.start), 0) : null;
  return { worstWaitMs, worstAtMs: worst ? worst.start - from : 0, longestStallMs, failed: during.filter((s) => !s.ok).length, statements: during.length, worstOutsideMs };
}
