/**
 * Calls `probe` until it returns something other than undefined and resolves to that. A probe
 * that throws counts as not yet (a dependency may still be down); after `timeoutMs` it throws,
 * naming `what`.
 */
export async function until<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  { timeoutMs = 10_000, everyMs = 20 } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
