/**
 * A stored function as the code declares it. `definition` is one CREATE OR REPLACE
 * FUNCTION statement; the installer records its hash under `name` and re-runs it whenever
 * the text changes. A change that old callers cannot live with gets a new name instead
 * (see "Stored functions" in docs/design/ledger.md).
 */
export interface StoredFunction {
  name: string;
  definition: string;
}
