import type { DomainCommand } from "../domains/kit/deps.js";
import { librariesCommands } from "../domains/libraries/commands.js";
import { registryCommands } from "../domains/registry/commands.js";
import { vulnerabilitiesCommands } from "../domains/vulnerabilities/commands.js";

export { blobRedirectOf, blobRedirectOptions, contentStoreOf, contentStoreOptions } from "../domains/registry/commands.js";
export { advisoryFeedOptions, advisoryFeedsOf } from "../domains/vulnerabilities/commands.js";
export type { CommandContext, DomainCommand } from "../domains/kit/deps.js";

/**
 * Every domain's commands of `platform-api`, in the order of `--help`: what each domain declares
 * as its `commands` (test/unit/domain-commands.test.ts holds the two equal), listed here so the CLI
 * finds them without loading the domains.
 */
export const DOMAIN_COMMANDS: Readonly<Record<string, DomainCommand>> = { ...registryCommands, ...vulnerabilitiesCommands, ...librariesCommands };
