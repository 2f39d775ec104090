/** Small byte helpers shared by the crypto modules (pure, Web-standard APIs only). */

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"))

export const toHex = (bytes: Uint8Array): string => {
  let out = ""
  for (const b of bytes) out += HEX[b]!
  return out
}

export const utf8 = (s: string): Uint8Array<ArrayBuffer> => new TextEncoder().encode(s)

/**
 * Compares two strings in time that depends only on their lengths, not on where they differ,
 * so secrets (operator tokens, hashes) cannot be guessed byte by byte from response times.
 */
export const constantTimeEqual = (a: string, b: string): boolean => {
  const x = utf8(a)
  const y = utf8(b)
  const len = Math.max(x.length, y.length)
  let diff = x.length ^ y.length
  for (let i = 0; i < len; i++) diff |= (x[i] ?? 0) ^ (y[i] ?? 0)
  return diff === 0
}
