import { createRequire } from 'node:module';

/**
 * Laurel's version, from its package.json: one folder up from the sources (src/) and two from
 * the build (dist/src/), which the image runs with package.json beside dist/. The name check
 * keeps a package.json of some other project above the build from answering.
 */
export const LAUREL_VERSION = ((): string => {
  const load = createRequire(import.meta.url);
  for (const candidate of ['../package.json', '../../package.json']) {
    try {
      const pkg = load(candidate) as { name?: string; version: string };
      if (pkg.name === 'laurel') return pkg.version;
    } catch {
      // not at this level
    }
  }
  throw new Error("Laurel's package.json not found above src/");
})();
