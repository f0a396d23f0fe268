// @ts-check
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/", "packages/*/dist/", "coverage/", "node_modules/", "docs/", "scratch/"] },
  js.configs.recommended,
  ...tseslint.configs.strict,
  {
    languageOptions: { globals: { console: "readonly", process: "readonly", URL: "readonly" } },
    rules: {
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-non-null-assertion": "error",
      "@typescript-eslint/consistent-type-imports": ["error", { fixStyle: "inline-type-imports" }],
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
    },
  },
  {
    // The inspector page's browser scripts (type-checked by tsconfig.page.json): a browser's globals, not Node's.
    files: ["src/inspector/page/**/*.js"],
    languageOptions: {
      sourceType: "module",
      globals: {
        process: "off",
        window: "readonly",
        document: "readonly",
        setTimeout: "readonly",
        EventSource: "readonly",
        ResizeObserver: "readonly",
        HTMLInputElement: "readonly",
        SVGGElement: "readonly",
      },
    },
  },
  {
    // The OpenClaw plugin is a consumer of the library: its public entry points only.
    files: ["packages/openclaw/src/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: ["../../*", "../../**", "a2a-statecharts/src/**", "a2a-statecharts/dist/**"],
              message: "packages/openclaw imports a2a-statecharts by its public entry points only.",
            },
          ],
        },
      ],
    },
  },
);
