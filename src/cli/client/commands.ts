import type { Command } from "../../command/command.js";
import { UsageError, type OptionSpec } from "../../command/options.js";
import { apiUrlOption } from "./api-url.js";

/** The client commands: they call an API as the person signed in, and need no context from the CLI. */
export type ClientCommand = Command<undefined>;

const loginOptions: Record<string, OptionSpec> = {
  ...apiUrlOption,
  headless: { type: "boolean", help: "sign in on another device: print a URL and a code to confirm there (no browser here)" },
  "identity-provider": { type: "string", help: "uid of an organization's identity provider to sign in with; default the server's" },
  timeout: { type: "string", default: "5m", help: "how long to wait for the sign-in (90s, 15m)" },
};

/**
 * `login`, `logout`, `whoami`, `invite accept`, `pull-token create`, `auth configure-docker` and `auth registry-password`, in the order of `--help`. Declared without
 * loading what they run (each `run` imports it), like the domains' commands.
 */
export const CLIENT_COMMANDS: Readonly<Record<string, ClientCommand>> = {
  login: {
    summary: "sign in to an API (in a browser, or --headless) and keep the session",
    description:
      "Sign in to the API: open its sign-in page in a browser (BROWSER, else xdg-open or open) and wait for it to\n" +
      "come back to 127.0.0.1, or with --headless print a URL and a code to confirm on any device. The session is\n" +
      "kept in $XDG_CONFIG_HOME/platform-api/credentials.json (mode 0600) and its API becomes the default one.",
    options: loginOptions,
    run: async ({ options }) => (await import("./login.js")).login(options),
  },
  logout: {
    summary: "revoke and forget the session of an API",
    description: "Revoke the session's refresh token at the API (failures ignored) and remove the session from the credentials file.",
    options: apiUrlOption,
    run: async ({ options }) => (await import("./session-commands.js")).logout(options["api-url"]),
  },
  whoami: {
    summary: "print who the session of an API is, and what it may do",
    description: "Print the signed-in person as the API sees them (GET /auth/v1/ok): subject, email, capabilities; JSON.",
    options: apiUrlOption,
    run: async ({ options }) => (await import("./session-commands.js")).whoami(options["api-url"]),
  },
  "invite accept": {
    summary: "accept an invitation to a group with its code",
    description: "Redeem an invitation code as the signed-in person (POST /auth/v1/register); print {identity, group} as JSON.",
    options: apiUrlOption,
    operands: "<code>",
    run: async ({ options, operands }) => {
      if (operands.length !== 1) throw new UsageError(operands.length === 0 ? "invite accept needs the invitation code" : "invite accept takes one code");
      await (await import("./session-commands.js")).acceptInvite(options["api-url"], operands[0]);
    },
  },
  "pull-token create": {
    summary: "create registry credentials that last (for docker login, skopeo, image pull secrets)",
    description:
      "Create a pull token at a group as the signed-in person (POST /iam/v2/pullTokens/<group>): an identity bound to\n" +
      "registry.pull there (or --role), whose password the registry host accepts until it expires. Prints {username,\n" +
      "password, expireTime, identity} as JSON; the password is shown this once. Delete the identity to revoke it.",
    options: {
      ...apiUrlOption,
      group: { type: "string", help: "uid of the group the token is made at and may pull from (required)" },
      ttl: { type: "string", default: "720h", help: "how long the password is accepted (at most 8760h)" },
      name: { type: "string", help: "the identity's name; default pull-token-<8 hex>" },
      role: { type: "string", help: "uid of the role bound instead of registry.pull (you must hold its capabilities)" },
    },
    run: async ({ options }) => (await import("./pull-token-commands.js")).createPullToken(options),
  },
  "auth configure-docker": {
    summary: "let docker, skopeo and podman use your session at a registry (a credential helper, no stored token)",
    description:
      "Name the credential helper docker-credential-platform-api (installed with the package; it must be on PATH) for\n" +
      "the registry host in credHelpers of Docker's config.json ($DOCKER_CONFIG, else ~/.docker; other keys kept), and\n" +
      "of the containers auth.json skopeo and podman read with --authfile or --containers-auth. On each pull or push the\n" +
      "client asks the helper, which mints a short-lived token for the registry from the session (POST\n" +
      "/sts/exchange_refresh_token with aud); no token is written to those files. One token is minted now, as a check.",
    options: {
      ...apiUrlOption,
      registry: { type: "string", help: "the registry host as image references name it (registry.example.com, localhost:5000), or its URL (required)" },
      authfile: { type: "string", help: "also write credHelpers into this containers auth file (skopeo, podman --authfile)" },
      "containers-auth": { type: "boolean", help: "also write it into $REGISTRY_AUTH_FILE, else $XDG_RUNTIME_DIR/containers/auth.json" },
    },
    run: async ({ options }) => (await import("./configure-docker.js")).configureDocker(options),
  },
  "auth registry-password": {
    summary: "create, list or revoke your own registry passwords (docker login without a credential helper)",
    description:
      "Manage the signed-in person's registry passwords (/auth/v1/registryPasswords): Basic credentials the registry\n" +
      "host's /token takes for what you may pull and push, nothing more. `create [--ttl 720h] [--description d]`\n" +
      "prints {username, password, id, expireTime} as JSON, the password this once (no --ttl: it lasts until revoked);\n" +
      "`list` prints them without secrets; `revoke <id>` ends one at once. At most 10 at a time.",
    options: {
      ...apiUrlOption,
      ttl: { type: "string", help: "create: how long the password is accepted (1m to 8760h); default until revoked" },
      description: { type: "string", help: "create: what it is for (at most 256 characters), shown by list" },
    },
    operands: "create | list | revoke <id>",
    run: async ({ options, operands }) => (await import("./registry-password-commands.js")).registryPassword(options, operands),
  },
};
