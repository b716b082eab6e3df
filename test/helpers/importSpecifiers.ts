/**
 * The module specifiers a TypeScript source imports, in every form: static, type-only, side-effect,
 * dynamic `import()`, `require()`, and re-exports (`export … from`). Read from the text, not a
 * compiler: the import-rule tests run on the sources as they are.
 */
const IMPORT_SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|^\s*import\s+|\bexport\s+\*\s+from\s*)['"]([^'"]+)['"]/gm;

export function importSpecifiers(source: string): string[] {
  return [...source.matchAll(IMPORT_SPECIFIER)].map((m) => m[1]!);
}
