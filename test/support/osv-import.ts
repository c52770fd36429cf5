// The OSV import as the server's processes run it, with every domain's reactions (the registry
// matches the images naming a changed package again): for tests that import records into the
// store of a running server.
import { importOsvFeed as importWith } from "../../src/domains/vulnerabilities/osv-import.js";
import { REACTIONS } from "../../src/server/domains.js";

export const importOsvFeed: typeof importWith = (db, entries, options = {}) => importWith(db, entries, { reactions: REACTIONS, ...options });
