/** Typed readers over an environment map; each failure names its variable. */

export type Env = Readonly<Record<string, string | undefined>>;

export class ConfigError extends Error {
  constructor(readonly variable: string, problem: string) {
    super(`${variable} ${problem}`);
    this.name = 'ConfigError';
  }
}

export function readers(env: Env) {
  const string = (name: string): string | null => {
    const value = env[name]?.trim();
    return value ? value : null;
  };
  const number = (name: string, fallback: number, min: number, max: number): number => {
    const raw = string(name);
    if (raw === null) return fallback;
    const value = Number(raw);
    if (!Number.isFinite(value) || value < min || value > max) {
      throw new ConfigError(name, `must be a number from ${min} to ${max} (got "${raw}")`);
    }
    return value;
  };
  return {
    string,
    number,
    int(name: string, fallback: number, min: number, max: number): number {
      const value = number(name, fallback, min, max);
      if (!Number.isInteger(value)) throw new ConfigError(name, `must be an integer (got "${string(name)}")`);
      return value;
    },
    bool(name: string, fallback: boolean): boolean {
      const raw = string(name)?.toLowerCase();
      if (raw === undefined || raw === null) return fallback;
      if (['true', '1', 'yes', 'on'].includes(raw)) return true;
      if (['false', '0', 'no', 'off'].includes(raw)) return false;
      throw new ConfigError(name, `must be true or false (got "${raw}")`);
    },
    oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
      const raw = string(name);
      if (raw === null) return fallback;
      if (!(allowed as readonly string[]).includes(raw)) {
        throw new ConfigError(name, `must be one of ${allowed.join(', ')} (got "${raw}")`);
      }
      return raw as T;
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
        throw new ConfigError(name, `must be an absolute URL (got "${raw}")`);
      }
    },
  };
}
