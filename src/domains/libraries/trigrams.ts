/**
 * The distinct 3-character runs (by code point) of a text: what the artifact name index holds for
 * a `name_lower`, and what a `query` of 3 or more characters is looked up by. A name containing the
 * query contains every trigram of it.
 */
export function trigramsOf(text: string): string[] {
  const chars = Array.from(text);
  const out = new Set<string>();
  for (let i = 0; i + 3 <= chars.length; i++) out.add(chars.slice(i, i + 3).join(""));
  return [...out];
}
