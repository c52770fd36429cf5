// PEP 440 ordering (https://peps.python.org/pep-0440/) through @renovatebot/pep440, a port of
// Python's `packaging.version`: epochs, pre/post/dev releases, local versions, zero padding of
// the release segment (`1.0 == 1.0.0`) and the normalized spellings (`1.0RC1 == 1.0rc1`).
import { compare, valid } from "@renovatebot/pep440";
import type { VersionOrdering } from "./ordering.js";

export const pypiOrdering: VersionOrdering<string> = {
  name: "PyPI",
  // `valid` is the strict grammar (no surrounding blanks); comparing re-parses, which is cheap.
  parse: (version) => (valid(version) === null ? undefined : version),
  compare: (a, b) => compare(a, b),
};
