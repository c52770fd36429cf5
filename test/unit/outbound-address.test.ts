import assert from "node:assert/strict";
import { test } from "node:test";
import { checkOutboundUrl, isPublicAddress, OutboundFetchError } from "../../src/outbound/fetch.js";

// Pure classification: nothing here opens a connection.

test("loopback, private, link-local, CGNAT, multicast and reserved addresses are not public, in every spelling", () => {
  for (const address of [
    "127.0.0.1", "127.255.0.9", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1", "169.254.169.254", "100.64.0.1",
    "0.0.0.0", "224.0.0.1", "255.255.255.255", "198.18.0.1",
    "::", "::1", "fc00::1", "fd12:3456::1", "fe80::1", "fe80::1%eth0", "ff02::1",
    "::ffff:127.0.0.1", "::ffff:7f00:1", "::ffff:10.0.0.1", "::ffff:a9fe:a9fe", "64:ff9b::a9fe:a9fe", "2002:7f00:1::",
    "not an address", "",
  ]) {
    assert.equal(isPublicAddress(address), false, address);
  }
});

test("public addresses are public", () => {
  for (const address of ["8.8.8.8", "1.1.1.1", "172.32.0.1", "100.128.0.1", "2606:4700::1111", "2001:4860:4860::8888", "::ffff:8.8.8.8"]) {
    assert.equal(isPublicAddress(address), true, address);
  }
});

test("URLs: https only unless http is allowed; private literals only when allowed; no credentials", () => {
  const strict = { allowHttp: false, allowPrivateAddresses: false };
  const refused = (url: string, policy = strict) => assert.throws(() => checkOutboundUrl(new URL(url), policy), OutboundFetchError, url);
  refused("http://issuer.example.com");
  refused("ftp://issuer.example.com");
  refused("https://127.0.0.1/");
  refused("https://[::1]:8443/");
  refused("https://[::ffff:169.254.169.254]/");
  refused("https://user:pass@issuer.example.com/");
  checkOutboundUrl(new URL("https://issuer.example.com/"), strict);
  checkOutboundUrl(new URL("https://8.8.8.8/"), strict);
  checkOutboundUrl(new URL("http://issuer.example.com/"), { allowHttp: true, allowPrivateAddresses: false });
  checkOutboundUrl(new URL("https://10.0.0.1/"), { allowHttp: false, allowPrivateAddresses: true });
});
