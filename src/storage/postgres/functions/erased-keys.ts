/**
 * The claimed form of an erased member's idempotency keys (SPEC 9.4): `sha256:<hex>`, as SQL
 * text over a text expression. laurel_apply_batch looks a posted key up under it too (so
 * a retry is still a duplicate), and the erasure writes it; spliced into both, written once.
 */
export const hashedKeySql = (expr: string): string => `'sha256:' || encode(sha256(convert_to(${expr}, 'UTF8')), 'hex')`;
