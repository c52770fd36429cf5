// Preloaded with `node --import` by tests and benches that measure a command's memory: prints
// the process's peak resident set size to stderr as it exits.
process.on("exit", () => process.stderr.write(`max-rss-kib ${process.resourceUsage().maxRSS}\n`));
