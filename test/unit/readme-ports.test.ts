import assert from "node:assert/strict";
import { test } from "node:test";
import { withTestPorts } from "../support/readme-ports.js";

test("a document's ports become the test's in one pass: a test port beginning with another document port is left as it is", () => {
  const ports = new Map([
    [8080, 50001],
    [5000, 41234],
    [9999, 39999],
  ]);
  const text = "curl localhost:8080/ping localhost:5000/v2/ http://127.0.0.1:9999/hook --port 8080 -p 5000 localhost:80800 9999";
  assert.equal(withTestPorts(text, ports), "curl localhost:50001/ping localhost:41234/v2/ http://127.0.0.1:39999/hook --port 50001 -p 41234 localhost:80800 9999");
});
