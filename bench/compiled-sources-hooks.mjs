// Resolve hook of compiled-sources.mjs: `<root>/src/**` and `<root>/gen/**` (as .ts or .js) become
// `<root>/dist/src/**.js` and `<root>/dist/gen/**.js`.
let root = "";

export function initialize(data) {
  root = data.root;
}

export function resolve(specifier, context, next) {
  if ((specifier.startsWith(".") || specifier.startsWith("file:")) && context.parentURL) {
    const url = new URL(specifier, context.parentURL).href;
    const match = /^(src|gen)\/(.+)\.(ts|js)$/.exec(url.startsWith(root) ? url.slice(root.length) : "");
    if (match) return { url: `${root}dist/${match[1]}/${match[2]}.js`, format: "module", shortCircuit: true };
  }
  return next(specifier, context);
}
