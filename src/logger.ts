import { stdoutLines } from "./stdout-lines.js";

/** One JSON object per line on stdout; levels below the configured one are dropped. */
export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** The levels, most verbose first. */
export const LOG_LEVELS = Object.keys(RANK) as readonly LogLevel[];

export function isLogLevel(value: string): value is LogLevel {
  return Object.hasOwn(RANK, value);
}

/** `write`: where lines go; by default standard output, where a line that cannot be written is dropped and counted (`stdoutLines`), never fatal. */
export function createLogger(level: LogLevel, write: (line: string) => void = (l) => stdoutLines().write(l)): Logger {
  const at = (lvl: Exclude<LogLevel, "silent">) => (message: string, fields: Record<string, unknown> = {}) => {
    if (RANK[lvl] < RANK[level]) return;
    write(`${JSON.stringify({ time: new Date().toISOString(), level: lvl, msg: message, ...fields })}\n`);
  };
  return { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
}

/** A logger that adds `fields` (e.g. the request id) to every line. */
export function withFields(logger: Logger, fields: Record<string, unknown>): Logger {
  return {
    debug: (message, more) => logger.debug(message, { ...fields, ...more }),
    info: (message, more) => logger.info(message, { ...fields, ...more }),
    warn: (message, more) => logger.warn(message, { ...fields, ...more }),
    error: (message, more) => logger.error(message, { ...fields, ...more }),
  };
}
