import type { Kysely } from "kysely";
import type { Command } from "../../command/command.js";
import type { DatabaseOptions } from "../../store/dialect.js";
import type { SecretBox } from "../../store/secret-box.js";
import type { Store } from "../../store/store.js";
import type { Pager } from "../../aip/pagination.js";
import type { TokenService } from "../../access/tokens.js";
import type { EventsConfig, OrganizationCreation } from "../../config.js";
import type { Database } from "./schema.js";
import type { Reactions } from "./reactions.js";

/** What service handlers are built from. */
export interface ServiceDeps {
  db: Kysely<Database>;
  pager: Pager;
  tokens: TokenService;
  /** Epoch milliseconds. */
  now: () => number;
  /** Who may create an organization over the API. */
  organizationCreation: OrganizationCreation;
  /** Where rows of every domain hang below groups and repos (the delete guards). */
  ownership: Ownership;
  /** Event settings (which sinks a subscription may name). */
  events: EventsConfig;
  /** Seals and opens secrets kept at rest (an identity provider's client secret). */
  secrets: SecretBox;
  /** Identities may name plain `http://` issuers (`serve --allow-http-issuers`, which the token exchange's fetches follow too). */
  allowHttpIssuers: boolean;
  /** Which upstream registries an Upstream may name (`serve --allow-http-upstreams`, `--allow-private-upstreams`); default https on public addresses. */
  upstreamRegistries?: { allowHttp: boolean; allowPrivateAddresses: boolean };
}

/** Tables of the schema that have column `C`. */
export type TableWith<C extends string> = { [T in keyof Database]: C extends keyof Database[T] ? T : never }[keyof Database];

/** Where rows hang below groups and repos, over every domain: what the delete guards read. */
export interface Ownership {
  ownedByGroup: readonly TableWith<"group_uid">[];
  deletedWithRepo: readonly TableWith<"repo_uid">[];
}

/** What a domain's command runs with: the store is opened by the composition root, with every domain's migrations. */
export interface CommandContext {
  /** Opens the database of `--db` and brings its schema up to date; closed by the caller once the command ends. */
  openStore(url: string, options?: DatabaseOptions): Promise<Store<Database>>;
  /** Every domain's reactions, run by a command whose change another domain reacts to (an advisories import). */
  reactions: Reactions;
}

/** A command of `platform-api` that a domain declares (`registry import`, `advisories import`). */
export type DomainCommand = Command<CommandContext>;
