/**
 * The first key that appears twice in one object of a JSON text, with its path (`group.name`),
 * or undefined. `text` must already parse (JSON.parse keeps the last duplicate silently, so
 * a caller could not tell which value the server took).
 */
export function duplicateKey(text: string): string | undefined {
  // One entry per open container: the keys seen so far (object) or null (array).
  const open: Array<{ keys: Set<string>; name: string } | null> = [];
  let expectKey = false;
  let lastKey = "";
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      let j = i + 1;
      while (text.charCodeAt(j) !== 0x22) j += text.charCodeAt(j) === 0x5c /* \ */ ? 2 : 1;
      const top = open[open.length - 1];
      if (expectKey && top) {
        const key = JSON.parse(text.slice(i, j + 1)) as string;
        if (top.keys.has(key)) return [...open.map((o) => o?.name ?? ""), key].filter((n) => n !== "").join(".");
        top.keys.add(key);
        lastKey = key;
        expectKey = false;
      }
      i = j;
    } else if (c === 0x7b /* { */) {
      open.push({ keys: new Set(), name: open.length === 0 ? "" : lastKey });
      expectKey = true;
    } else if (c === 0x5b /* [ */) {
      open.push(null);
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      open.pop();
      expectKey = false;
    } else if (c === 0x2c /* , */) {
      expectKey = open[open.length - 1] !== null;
    }
  }
  return undefined;
}
