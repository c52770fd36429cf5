import type { OptionSpec, Options } from "./options.js";

/**
 * One command of `platform-api` (`registry import`): its help and what it runs. A command is
 * declared without loading what it runs: `run` imports that, so `--help` and mistakes in the
 * command line are answered at once. `Context` is what the caller hands every run (a domain
 * command gets the store opener of the composition root).
 */
export interface Command<Context> {
  /** Its line in `platform-api --help`. */
  summary: string;
  /** The paragraph of its own `--help`. */
  description: string;
  /** Its options, besides `--help`. */
  options: Record<string, OptionSpec>;
  /** How its operands read after the options (`<path>...`); without it, operands are refused. */
  operands?: string;
  /**
   * Runs once the options are parsed; output goes to stdout, progress and refusals to stderr.
   * Resolves to the exit status (0 when void). Throws UsageError for a mistake in the command line,
   * CommandError for another failure the user can act on.
   */
  run(input: { options: Options; operands: string[]; context: Context }): Promise<number | void>;
}
