/**
 * A document's ports (`localhost:8080`, `127.0.0.1:9999`, `--port 5000`) replaced by a test's own,
 * in one pass: replaced one after another, a test port that begins with a later document port
 * (50001 after 5000) would be rewritten again, into no port at all.
 */
export function withTestPorts(text: string, portOf: ReadonlyMap<number, number>): string {
  const documentPorts = [...portOf.keys()].join("|");
  const pattern = new RegExp(`(localhost:|127\\.0\\.0\\.1:|(?:-p|--port|--registry-port) )(${documentPorts})\\b`, "g");
  return text.replace(pattern, (_, before: string, port: string) => `${before}${portOf.get(Number(port))}`);
}
