import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

// The root is what a gateway reads first: few names, each explained where an editor shows it.

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const ENTRY_POINTS = [
  "index",
  "discord/index",
  "testing/index",
  "inspector/index",
  "durable/index",
  "persistence/postgres/index",
  "policies/entryPoint",
];

const program = ts.createProgram(
  ENTRY_POINTS.map((e) => resolve(ROOT, `src/${e}.ts`)),
  { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, strict: true },
);
const checker = program.getTypeChecker();

function exportsOf(entry: string): Array<{ name: string; value: boolean; documented: boolean }> {
  const file = program.getSourceFile(resolve(ROOT, `src/${entry}.ts`));
  if (file === undefined) throw new Error(`no source for ${entry}`);
  const moduleSymbol = checker.getSymbolAtLocation(file);
  if (moduleSymbol === undefined) throw new Error(`${entry} is not a module`);
  return checker.getExportsOfModule(moduleSymbol).map((exported) => {
    const target = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
    const typeOnly = exported.declarations?.some((d) => ts.isTypeOnlyExportDeclaration(d)) ?? false;
    const docs =
      ts.displayPartsToString(target.getDocumentationComment(checker)).trim() ||
      // A `const x = setup(...).createMachine(...)` is documented on its statement.
      (target.declarations ?? [])
        .flatMap((d) => ts.getJSDocCommentsAndTags(d))
        .map((doc) => doc.getText())
        .join("");
    return {
      name: exported.name,
      value: !typeOnly && (target.flags & ts.SymbolFlags.Value) !== 0,
      documented: docs.length > 0,
    };
  });
}

describe("the root entry point", () => {
  const root = exportsOf("index");

  // The runtime, the five machines, the config, the events and the errors: the pure policies live in
  // `a2a-statecharts/policies`.
  it("exports at most 25 values", () => {
    const values = root.filter((e) => e.value).map((e) => e.name);
    expect(values.length, values.join(", ")).toBeLessThanOrEqual(25);
  });

  it.each(ENTRY_POINTS)("every name %s exports has a doc comment", (entry) => {
    const undocumented = exportsOf(entry)
      .filter((e) => !e.documented)
      .map((e) => e.name);
    if (undocumented.length > 0) throw new Error(`undocumented: ${undocumented.join(" ")}`);
  });
});
