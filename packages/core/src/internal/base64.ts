/** Base64 (RFC 4648 section 4 and 5) without `Buffer`, so core stays platform-neutral. */

const STD = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
const URL_SAFE = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

const encode = (bytes: Uint8Array, alphabet: string, pad: boolean): string => {
  let out = ""
  for (let i = 0; i < bytes.length; i += 3) {
    const a = bytes[i]!
    const b = bytes[i + 1]
    const c = bytes[i + 2]
    const n = (a << 16) | ((b ?? 0) << 8) | (c ?? 0)
    out += alphabet[n >> 18]! + alphabet[(n >> 12) & 63]!
    out += b === undefined ? (pad ? "=" : "") : alphabet[(n >> 6) & 63]!
    out += c === undefined ? (pad ? "=" : "") : alphabet[n & 63]!
  }
  return out
}

const decode = (text: string, alphabet: string): Uint8Array | undefined => {
  const bare = text.replace(/={1,2}$/, "")
  if (bare.length % 4 === 1) return undefined
  const out = new Uint8Array(Math.floor((bare.length * 3) / 4))
  let value = 0
  let bits = 0
  let o = 0
  for (const ch of bare) {
    const v = alphabet.indexOf(ch)
    if (v < 0) return undefined
    value = ((value << 6) | v) & 0xffffff
    bits += 6
    if (bits >= 8) {
      bits -= 8
      out[o++] = (value >> bits) & 0xff
    }
  }
  return out
}

export const encodeBase64 = (bytes: Uint8Array): string => encode(bytes, STD, true)
export const decodeBase64 = (text: string): Uint8Array | undefined => decode(text, STD)
export const encodeBase64Url = (bytes: Uint8Array): string => encode(bytes, URL_SAFE, false)
export const decodeBase64Url = (text: string): Uint8Array | undefined => decode(text, URL_SAFE)
