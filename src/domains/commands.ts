import type { DomainCommand } from "./deps.js";
import { librariesCommands } from "./libraries/commands.js";
import { registryCommands } from "./registry/commands.js";
import { vulnerabilitiesCommands } from "./vulnerabilities/commands.js";

export { blobRedirectOf, blobRedirectOptions, contentStoreOf, contentStoreOptions } from "./registry/commands.js";
export { advisoryFeedOptions, advisoryFeedsOf } from "./vulnerabilities/commands.js";
export type { CommandContext, DomainCommand } from "./deps.js";

/**
 * Every domain's commands of `platform-api`, in the order of `--help`: what each domain declares
 * as its `commands` (test/unit/domain-commands.test.ts holds the two equal), listed here so the CLI
 * finds them without loading the domains.
 */
export const DOMAIN_COMMANDS: Readonly<Record<string, DomainCommand>> = { ...registryCommands, ...vulnerabilitiesCommands, ...librariesCommands };
