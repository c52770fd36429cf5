import { Ecosystem } from "../../../gen/platform/libraries/v2/artifact_pb.js";
import type { Violations } from "../../aip/validation.js";
import type { LibraryEcosystem } from "../../engines/package-feeds/library-package.js";

/** The API's ecosystems and the OSV names the store and the advisory matcher use. */
const OSV_NAMES = new Map<Ecosystem, LibraryEcosystem>([
  [Ecosystem.ECOSYSTEM_JAVA, "Maven"],
  [Ecosystem.ECOSYSTEM_PYTHON, "PyPI"],
  [Ecosystem.ECOSYSTEM_JAVASCRIPT, "npm"],
]);

const API_ECOSYSTEMS = new Map([...OSV_NAMES].map(([api, osv]) => [osv as string, api]));

/** The API ecosystem of a stored OSV name. */
export const apiEcosystem = (osv: string): Ecosystem => API_ECOSYSTEMS.get(osv) ?? Ecosystem.ECOSYSTEM_UNSPECIFIED;

/** The OSV names of `ecosystems` (deduplicated, in request order); records a violation for none or an unknown one. */
export function checkEcosystems(v: Violations, ecosystems: Ecosystem[]): LibraryEcosystem[] {
  if (ecosystems.length === 0) v.add("ecosystems", "is required: name one or more of ECOSYSTEM_JAVA, ECOSYSTEM_PYTHON, ECOSYSTEM_JAVASCRIPT (or JAVA, PYTHON, JAVASCRIPT)");
  const out: LibraryEcosystem[] = [];
  ecosystems.forEach((e, i) => {
    const osv = OSV_NAMES.get(e);
    if (!osv) v.add(`ecosystems[${i}]`, `${e === Ecosystem.ECOSYSTEM_UNSPECIFIED ? "ECOSYSTEM_UNSPECIFIED" : e} is not an ecosystem of the library index`);
    else if (!out.includes(osv)) out.push(osv);
  });
  return out;
}
