// A local OpenID Provider to try people signing in on one machine: oidc-provider (a development
// dependency, the certified implementation the tests run) on 127.0.0.1, with one client for the
// server and one person, ada@example.com (its login form takes any password).
//   node --import tsx scripts/local-idp.ts <issuer, e.g. http://127.0.0.1:9000> <the server's API URL>
// Runs until stopped; prints the flags that point `serve` at it.
import { startTestIdp } from "../test/support/test-idp.js";

const [issuerArg = "http://127.0.0.1:9000", apiUrl = "http://localhost:8080"] = process.argv.slice(2);
const issuer = new URL(issuerArg);
if (issuer.hostname !== "127.0.0.1") throw new Error("the local provider listens on 127.0.0.1: give http://127.0.0.1:<port>");
const idp = await startTestIdp({ port: Number(issuer.port) });
await idp.addClient({ client_id: "platform", client_secret: "local-secret", redirect_uris: [new URL("/auth/v1/callback", apiUrl).toString()], token_endpoint_auth_method: "client_secret_post" });
idp.setAccount("ada", { email: "ada@example.com", email_verified: true, name: "Ada Lovelace" });
process.stdout.write(`--login-issuer ${idp.issuer} --login-client-id platform --login-client-secret local-secret --allow-http-issuers --allow-private-issuers\n`);
