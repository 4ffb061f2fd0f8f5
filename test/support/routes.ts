import type { WebApp } from '../../src/http/app.js';

interface Layer {
  route?: { path: string; methods: Record<string, boolean> };
  rawPath?: string;
  handle?: { stack?: Layer[] };
}

/** Routes as the Express router holds them (`GET /v1/boards/:boardId`); mounted sub-apps (Swagger UI, Bull Board) as USE. */
export function routesOf(web: WebApp): string[] {
  const found = new Set<string>();
  const walk = (stack: Layer[]) => {
    for (const layer of stack) {
      if (layer.route) {
        for (const method of Object.keys(layer.route.methods)) found.add(`${method.toUpperCase()} ${layer.route.path}`);
      } else if (layer.handle?.stack) {
        walk(layer.handle.stack);
      } else if (layer.rawPath && layer.rawPath !== '/') {
        found.add(`USE ${layer.rawPath}`);
      }
    }
  };
  walk((web.app as unknown as { router: { stack: Layer[] } }).router.stack);
  return [...found].sort();
}
