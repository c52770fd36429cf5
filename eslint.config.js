import tseslint from "typescript-eslint";

const ONLY_THE_JOBS_KIT_SCHEDULES = "Background work is a job the domain declares (`jobs` in its Domain, src/domains/kit/jobs.ts): only the jobs kit schedules.";

export default tseslint.config(
  { ignores: ["gen/**", "node_modules/**", "proto-deps/**", "data/**", "examples/grpc-js/gen/**", "test-output/**", "dist/**"] },
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-non-null-assertion": "off",
      "no-console": "error",
    },
  },
  {
    files: ["src/store/migrations/**", "src/domains/*/migrations/**", "src/domains/kit/list-query.ts"],
    rules: { "@typescript-eslint/no-explicit-any": "off" },
  },
  {
    // Only the jobs kit schedules: a domain declares its background work as a job (src/domains/kit/jobs.ts).
    files: ["src/domains/**"],
    ignores: ["src/domains/kit/jobs.ts", "src/domains/kit/jobs/**"],
    rules: {
      "no-restricted-globals": ["error", { name: "setInterval", message: ONLY_THE_JOBS_KIT_SCHEDULES }],
      "no-restricted-properties": ["error", { object: "globalThis", property: "setInterval", message: ONLY_THE_JOBS_KIT_SCHEDULES }],
      "no-restricted-imports": [
        "error",
        { paths: ["node:timers", "timers", "node:timers/promises", "timers/promises"].map((name) => ({ name, importNames: ["setInterval"], message: ONLY_THE_JOBS_KIT_SCHEDULES })) },
      ],
    },
  },
  {
    files: ["test/**", "bench/**", "scripts/**", "examples/**"],
    rules: { "no-console": "off" },
  },
  {
    // `npm test` runs the tests compiled into dist/test/, where a path relative to the module's own
    // URL names another file than it does in test/: the repository's files are named from its root.
    files: ["test/**"],
    ignores: ["test/support/repo.ts", "test/fixtures/**"],
    rules: {
      "no-restricted-syntax": [
        "error",
        {
          selector: "NewExpression[callee.name='URL'][arguments.1.object.type='MetaProperty']",
          message: "A file of the repository is `inRepo(...)` (test/support/repo.ts): tests also run compiled, from dist/test/.",
        },
        {
          selector: "MemberExpression[object.type='MetaProperty'][property.name=/^(dirname|filename)$/]",
          message: "A file of the repository is `inRepo(...)` (test/support/repo.ts): tests also run compiled, from dist/test/.",
        },
      ],
    },
  },
);
