/**
 * Typed readers over an environment map. A bad value is recorded, naming its
 * variable, and the reader goes on with the default, so that one start
 * reports every bad or missing variable (`done` throws them together).
 */

export type Env = Readonly<Record<string, string | undefined>>;

export interface ConfigProblem {
  readonly variable: string;
  readonly problem: string;
}

/** One line per problem, each starting with its variable; `variable` is the first one's. */
export class ConfigError extends Error {
  readonly variable: string;
  readonly problems: readonly ConfigProblem[];

  constructor(variable: string, problem: string, others: readonly ConfigProblem[] = []) {
    const problems = [{ variable, problem }, ...others];
    super(problems.map((p) => `${p.variable} ${p.problem}`).join('\n'));
    this.name = 'ConfigError';
    this.variable = variable;
    this.problems = problems;
  }
}

export type Readers = ReturnType<typeof readers>;

export function readers(env: Env) {
  const problems: ConfigProblem[] = [];
  /** Records a problem (the first per variable) for `done`. */
  const fail = (variable: string, problem: string): void => {
    if (!problems.some((p) => p.variable === variable)) problems.push({ variable, problem });
  };
  const string = (name: string): string | null => {
    const value = env[name]?.trim();
    return value ? value : null;
  };
  const number = (name: string, fallback: number, min: number, max: number): number => {
    const raw = string(name);
    if (raw === null) return fallback;
    const value = Number(raw);
    if (!Number.isFinite(value) || value < min || value > max) {
      fail(name, `must be a number from ${min} to ${max} (got "${raw}")`);
      return fallback;
    }
    return value;
  };
  return {
    fail,
    /** Throws every recorded problem at once. */
    done(): void {
      if (problems.length > 0) throw new ConfigError(problems[0].variable, problems[0].problem, problems.slice(1));
    },
    string,
    number,
    int(name: string, fallback: number, min: number, max: number): number {
      const value = number(name, fallback, min, max);
      if (Number.isInteger(value)) return value;
      fail(name, `must be an integer (got "${string(name)}")`);
      return fallback;
    },
    bool(name: string, fallback: boolean): boolean {
      const raw = string(name)?.toLowerCase();
      if (raw === undefined || raw === null) return fallback;
      if (['true', '1', 'yes', 'on'].includes(raw)) return true;
      if (['false', '0', 'no', 'off'].includes(raw)) return false;
      fail(name, `must be true or false (got "${raw}")`);
      return fallback;
    },
    oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
      const raw = string(name);
      if (raw === null) return fallback;
      if ((allowed as readonly string[]).includes(raw)) return raw as T;
      fail(name, `must be one of ${allowed.join(', ')} (got "${raw}")`);
      return fallback;
    },
    list(name: string): string[] | null {
      const raw = string(name);
      if (raw === null) return null;
      return raw.split(',').map((item) => item.trim()).filter(Boolean);
    },
    url(name: string): string | null {
      const raw = string(name);
      if (raw === null) return null;
      try {
        return new URL(raw).toString();
      } catch {
        fail(name, `must be an absolute URL (got "${raw}")`);
        return null;
      }
    },
  };
}
