/**
 * The vulnerabilities domain's face: what other folders may use of it. Everything else under
 * `src/domains/vulnerabilities/` is private to the domain.
 */
export { advisoriesNamed, recordsDatabaseSpecific } from "./store/advisories.js";
