// The fixed version of a finding and the severity a report counts it under, case by case; the
// first cases are RustSec records' own ranges.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";
import { fixedVersion, reportSeverity, type OsvAffected, type OsvRecord } from "../../src/engines/advisories/index.js";
import { inRepo } from "../support/repo.js";

const rustsec = (id: string) => JSON.parse(readFileSync(inRepo(`../shared/data/osv/rustsec/crates/${id}.json`), "utf8")) as OsvRecord;

describe("fixedVersion", () => {
  const smallvec = rustsec("RUSTSEC-2021-0003").affected![0];
  const hyper = rustsec("RUSTSEC-2017-0002").affected![0];
  const cases: Array<[string, OsvAffected, string, string, string | undefined]> = [
    ["RUSTSEC-2021-0003 at 0.6.9: the fix of its own range", smallvec, "crates.io", "0.6.9", "0.6.14"],
    ["RUSTSEC-2021-0003 at 1.2.0: the second range's fix", smallvec, "crates.io", "1.2.0", "1.6.1"],
    ["RUSTSEC-2021-0003 at 0.6.14: not affected, no fix", smallvec, "crates.io", "0.6.14", undefined],
    ["RUSTSEC-2017-0002 at 0.10.1", hyper, "crates.io", "0.10.1", "0.10.2"],
    ["RUSTSEC-2017-0002 at 0.9.0", hyper, "crates.io", "0.9.0", "0.9.18"],
    ["last_affected only: no fix", { ranges: [{ type: "ECOSYSTEM", events: [{ introduced: "0" }, { last_affected: "1.2.3" }] }] }, "npm", "1.0.0", undefined],
    ["listed in versions only", { versions: ["1.0.0"] }, "npm", "1.0.0", undefined],
    ["two fixes above in one range: the lowest", { ranges: [{ type: "ECOSYSTEM", events: [{ introduced: "0" }, { fixed: "2.0.0" }, { introduced: "1.5.0" }, { fixed: "1.6.0" }] }] }, "npm", "1.5.2", "1.6.0"],
    ["Debian ordering", { ranges: [{ type: "ECOSYSTEM", events: [{ introduced: "0" }, { fixed: "3.0.11-1~deb12u2" }] }] }, "Debian:12", "3.0.9-1", "3.0.11-1~deb12u2"],
    ["apk ordering", { ranges: [{ type: "ECOSYSTEM", events: [{ introduced: "0" }, { fixed: "3.1.4-r3" }] }] }, "Alpine:v3.19", "3.1.4-r2", "3.1.4-r3"],
    ["a malformed range is skipped", { ranges: [{ type: "ECOSYSTEM", events: [{ introduced: "0" }, { fixed: "not a version" }] }] }, "npm", "1.0.0", undefined],
  ];
  for (const [name, entry, ecosystem, version, expected] of cases) test(name, () => assert.equal(fixedVersion(ecosystem, version, entry), expected));
});

describe("reportSeverity", () => {
  const cases: Array<[string, Parameters<typeof reportSeverity>, ReturnType<typeof reportSeverity>]> = [
    ["CVSS 3.1 9.8", [[{ type: "CVSS_V3", score: "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H" }]], { severity: "CRITICAL", score: 9.8 }],
    ["the highest of several", [[{ type: "CVSS_V3", score: "CVSS:3.1/AV:L/AC:H/PR:H/UI:R/S:U/C:L/I:N/A:N" }, { type: "CVSS_V3", score: "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:N/A:N" }]], { severity: "HIGH", score: 7.5 }],
    ["CVSS 0.0 is LOW", [[{ type: "CVSS_V3", score: "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:N/A:N" }]], { severity: "LOW", score: 0 }],
    ["an Ubuntu priority", [[{ type: "Ubuntu", score: "medium" }]], { severity: "MEDIUM" }],
    ["GitHub's database_specific word", [[], { severity: "MODERATE" }], { severity: "MEDIUM" }],
    ["an unparseable vector and nothing else", [[{ type: "CVSS_V3", score: "CVSS:3.1/garbage" }]], { severity: "UNKNOWN" }],
    ["nothing", [undefined], { severity: "UNKNOWN" }],
  ];
  for (const [name, args, expected] of cases) test(name, () => assert.deepEqual(reportSeverity(...args), expected));
});
