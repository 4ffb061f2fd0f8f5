/**
 * A compact JWS: three base64url parts (the signature may be empty, as in `alg: none`, which
 * is then refused as a token rather than looked up as a key). API keys carry no dot (and
 * ADMIN_API_KEY may not have this shape), so the shape alone tells the two apart without a
 * lookup.
 */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

export function looksLikePlayerToken(presented: string): boolean {
  return TOKEN_SHAPE.test(presented);
}
