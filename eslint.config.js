import tseslint from "typescript-eslint";

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
    files: ["src/store/migrations/**", "src/domains/*/migrations/**", "src/domains/list-query.ts"],
    rules: { "@typescript-eslint/no-explicit-any": "off" },
  },
  {
    files: ["test/**", "bench/**", "scripts/**", "examples/**"],
    rules: { "no-console": "off" },
  },
);
