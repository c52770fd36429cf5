// The matcher over real OSV records: the RustSec advisory database (CC0-1.0), 1,206 crates.io
// records in ../shared/data/osv/rustsec/crates next to the repository (OSV_RUSTSEC_DIR overrides).
// Skipped, saying so, where that folder is absent.
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, test } from "node:test";
import { evaluateAffected, isVulnerable } from "../../src/engines/advisories/affected.js";
import { parseOsvDocument } from "../../src/engines/advisories/osv/parse.js";
import type { OsvRecord } from "../../src/engines/advisories/osv/record.js";
import { scoreSeverities } from "../../src/engines/advisories/severity.js";
import { ROOT } from "../support/repo.js";

const DIR = process.env.OSV_RUSTSEC_DIR ?? resolve(ROOT, "../shared/data/osv/rustsec/crates");
const skip = existsSync(DIR) ? false : `RustSec records not found in ${DIR}`;

/** A record as the importer reads it. */
const read = (file: string): OsvRecord => parseOsvDocument(readFileSync(join(DIR, file)), file);
const load = (id: string): OsvRecord => read(`${id}.json`);

/**
 * Per record: versions read off its ranges (just below `introduced`, at it, just below `fixed`,
 * at it) and whether each is affected.
 */
const CASES: { id: string; crate: string; affected: string[]; unaffected: string[] }[] = [
  // openssl: introduced 0.0.0-0, fixed 0.9.0
  { id: "RUSTSEC-2016-0001", crate: "openssl", affected: ["0.0.0-0", "0.0.1", "0.8.3", "0.9.0-rc.1"], unaffected: ["0.9.0", "0.9.1", "0.10.55"] },
  // portaudio: introduced 0.0.0-0, no fix
  { id: "RUSTSEC-2016-0003", crate: "portaudio", affected: ["0.0.0-0", "0.7.0", "99.0.0"], unaffected: [] },
  // smallvec: [0.3.2, 0.3.4) [0.4.0-0, 0.4.5) [0.5.0-0, 0.5.1) [0.6.0-0, 0.6.3)
  {
    id: "RUSTSEC-2018-0003",
    crate: "smallvec",
    affected: ["0.3.2", "0.3.3", "0.4.0-0", "0.4.0", "0.4.4", "0.5.0", "0.6.0", "0.6.2"],
    unaffected: ["0.3.1", "0.3.4", "0.3.99", "0.4.5", "0.5.1", "0.6.3", "1.0.0"],
  },
  // hyper: [0.12.0, 0.12.36) [0.13.0-0, 0.13.10) [0.14.0-0, 0.14.3)
  {
    id: "RUSTSEC-2021-0020",
    crate: "hyper",
    affected: ["0.12.0", "0.12.35", "0.13.0-0", "0.13.9", "0.14.0", "0.14.2"],
    unaffected: ["0.11.27", "0.12.0-rc.1", "0.12.36", "0.13.10", "0.14.3", "1.0.0"],
  },
  // time: [0.0.0-0, 0.2.0), then only the pre-releases of 0.2.1 ... 0.2.6, then [0.2.7-0, 0.2.23)
  {
    id: "RUSTSEC-2020-0071",
    crate: "time",
    affected: ["0.1.43", "0.1.99", "0.2.0-alpha.1", "0.2.1-0", "0.2.6-beta.1", "0.2.7-0", "0.2.7", "0.2.22"],
    unaffected: ["0.2.0", "0.2.1", "0.2.5", "0.2.6", "0.2.23", "0.3.0"],
  },
  // lettre: [0.7.0, 0.7.1) [0.8.0, 0.8.4) [0.9.0, 0.9.5) [0.10.0-alpha.1, 0.10.0-alpha.4)
  {
    id: "RUSTSEC-2020-0069",
    crate: "lettre",
    affected: ["0.7.0", "0.8.0", "0.8.3", "0.9.0", "0.9.4", "0.10.0-alpha.1", "0.10.0-alpha.3"],
    unaffected: ["0.6.2", "0.7.1", "0.7.99", "0.8.4", "0.9.5", "0.10.0-alpha.0", "0.10.0-alpha.4", "0.10.0-beta.1", "0.10.0"],
  },
  // enum-map: [2.0.0-2, 2.0.2): numeric pre-release identifiers compare numerically
  { id: "RUSTSEC-2022-0010", crate: "enum-map", affected: ["2.0.0-2", "2.0.0-10", "2.0.0", "2.0.1"], unaffected: ["2.0.0-1", "1.1.1", "2.0.2"] },
  // anchor-lang: [1.0.0-rc.1, 1.0.0-rc.2): a single pre-release
  { id: "RUSTSEC-2026-0146", crate: "anchor-lang", affected: ["1.0.0-rc.1"], unaffected: ["1.0.0-rc.0", "1.0.0-beta.9", "1.0.0-rc.2", "1.0.0", "0.31.1"] },
];

describe("RustSec OSV records", { skip }, () => {
  for (const c of CASES) {
    test(`${c.id} (${c.crate})`, () => {
      const record = load(c.id);
      for (const version of c.affected) {
        assert.equal(isVulnerable({ ecosystem: "crates.io", name: c.crate, version }, record), true, `${version} affected`);
      }
      for (const version of c.unaffected) {
        assert.equal(isVulnerable({ ecosystem: "crates.io", name: c.crate, version }, record), false, `${version} unaffected`);
      }
      assert.equal(isVulnerable({ ecosystem: "crates.io", name: `${c.crate}-other`, version: c.affected[0] ?? "1.0.0" }, record), false);
    });
  }

  test("the CVSS vectors of these records score as FIRST's calculators do", () => {
    const scores = Object.fromEntries(
      ["RUSTSEC-2016-0001", "RUSTSEC-2016-0003", "RUSTSEC-2018-0003", "RUSTSEC-2021-0020", "RUSTSEC-2020-0071", "RUSTSEC-2020-0069", "RUSTSEC-2026-0146"].map(
        (id) => [id, scoreSeverities(load(id).severity).map((s) => s.baseScore)],
      ),
    );
    assert.deepEqual(scores, {
      "RUSTSEC-2016-0001": [8.1], // CVSS:3.0/AV:N/AC:H/PR:N/UI:N/S:U/C:H/I:H/A:H
      "RUSTSEC-2016-0003": [5.9], // CVSS:3.0/AV:N/AC:H/PR:N/UI:N/S:U/C:H/I:N/A:N
      "RUSTSEC-2018-0003": [9.8], // CVSS:3.0/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H
      "RUSTSEC-2021-0020": [8.1], // CVSS:3.1/AV:N/AC:H/PR:N/UI:N/S:U/C:H/I:H/A:H
      "RUSTSEC-2020-0071": [6.2], // CVSS:3.1/AV:L/AC:L/PR:N/UI:N/S:U/C:N/I:N/A:H
      "RUSTSEC-2020-0069": [5.3], // CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:L/A:N
      "RUSTSEC-2026-0146": [8.7], // CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:N/VI:H/VA:N/SC:N/SI:N/SA:N
    });
  });

  test("every record, as the importer parses it, evaluates without throwing; every bound is on the right side", () => {
    const files = readdirSync(DIR).filter((f) => f.endsWith(".json"));
    assert.ok(files.length >= 1000, `${files.length} records`);
    const probes = ["0.0.0", "0.0.1-alpha.1", "0.1.0", "1.0.0", "1.2.3-rc.1", "99.99.99"];
    let evaluations = 0;
    for (const file of files) {
      const record = read(file);
      for (const entry of record.affected ?? []) {
        const ecosystem = entry.package!.ecosystem;
        for (const version of probes) {
          assert.deepEqual(evaluateAffected(ecosystem, version, entry).unevaluable, [], `${file} at ${version}`);
          evaluations++;
        }
        for (const range of entry.ranges ?? []) {
          const introduced = new Set(range.events.flatMap((e) => ("introduced" in e ? [e.introduced] : [])));
          const fixed = new Set(range.events.flatMap((e) => ("fixed" in e ? [e.fixed] : [])));
          const alone = { ranges: [range] };
          for (const v of introduced) {
            if (v === "0" || fixed.has(v)) continue;
            assert.equal(evaluateAffected(ecosystem, v, alone).affected, true, `${file}: introduced ${v} is affected`);
          }
          for (const v of fixed) {
            if (introduced.has(v)) continue;
            assert.equal(evaluateAffected(ecosystem, v, alone).affected, false, `${file}: fixed ${v} is not affected`);
          }
        }
      }
      for (const score of scoreSeverities(record.severity)) {
        assert.ok(score.baseScore !== undefined && score.baseScore >= 0 && score.baseScore <= 10, `${file}: ${score.vector}`);
      }
    }
    assert.ok(evaluations >= files.length * probes.length);
  });
});
