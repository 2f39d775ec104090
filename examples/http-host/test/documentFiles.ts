/**
 * Real files for the document tests, made at test time: a small valid PDF, and images whose
 * halves have different colours so a rotation shows in the decoded pixels. Also a self-signed
 * certificate for the HTTPS tests (openssl) and an HTTPS client that trusts it.
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { request } from "node:https"
import { tmpdir } from "node:os"
import { join } from "node:path"
import sharp from "sharp"

/** A one-page PDF (blank page), with a correct xref table. */
export const pdf = (label = "waybill"): Uint8Array => {
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 100] /Contents 4 0 R >>`,
    `<< /Length ${12 + label.length} >>\nstream\n% ${label}\nBT ET\nendstream`
  ]
  let body = "%PDF-1.4\n"
  const offsets: Array<number> = []
  objects.forEach((o, i) => {
    offsets.push(body.length)
    body += `${i + 1} 0 obj\n${o}\nendobj\n`
  })
  const xref = body.length
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`
  for (const off of offsets) body += `${String(off).padStart(10, "0")} 00000 n \n`
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`
  return new TextEncoder().encode(body)
}

export const RED = { r: 255, g: 0, b: 0 }
export const BLUE = { r: 0, g: 0, b: 255 }

/** A 40x20 image: left half red, right half blue, in the given format. */
export const twoToneImage = async (format: "png" | "jpeg" | "gif" | "tiff"): Promise<Uint8Array> => {
  const blue = await sharp({ create: { width: 20, height: 20, channels: 3, background: BLUE } })
    .png()
    .toBuffer()
  const image = sharp({ create: { width: 40, height: 20, channels: 3, background: RED } }).composite([
    { input: blue, left: 20, top: 0 }
  ])
  return new Uint8Array(await image.toFormat(format).toBuffer())
}

/** Width, height and the RGB of a pixel of an encoded image. */
export const decode = async (bytes: Uint8Array) => {
  const { data, info } = await sharp(bytes).removeAlpha().raw().toBuffer({ resolveWithObject: true })
  const at = (x: number, y: number) => {
    const i = (y * info.width + x) * info.channels
    return { r: data[i]!, g: data[i + 1]!, b: data[i + 2]! }
  }
  return { width: info.width, height: info.height, format: info.format, at }
}

/** Whether a decoded pixel is close to a colour (JPEG is lossy). */
export const near = (a: { r: number; g: number; b: number }, b: { r: number; g: number; b: number }) =>
  Math.abs(a.r - b.r) < 40 && Math.abs(a.g - b.g) < 40 && Math.abs(a.b - b.b) < 40

/** Whether openssl can make the test certificate here. */
export const hasOpenssl = (() => {
  try {
    execFileSync("openssl", ["version"], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
})()

/** A self-signed certificate for 127.0.0.1 and localhost, valid for a day. */
export const selfSigned = (): { cert: string; key: string } => {
  const dir = mkdtempSync(join(tmpdir(), "waybill-tls-"))
  try {
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-keyout",
        join(dir, "key.pem"),
        "-out",
        join(dir, "cert.pem"),
        "-days",
        "1",
        "-subj",
        "/CN=localhost",
        "-addext",
        "subjectAltName=IP:127.0.0.1,DNS:localhost"
      ],
      { stdio: "ignore" }
    )
    return { cert: readFileSync(join(dir, "cert.pem"), "utf8"), key: readFileSync(join(dir, "key.pem"), "utf8") }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** One HTTPS request trusting `ca`; the whole body is read. */
export const httpsFetch = (
  url: string,
  ca: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {}
): Promise<{ status: number; headers: Record<string, string | Array<string> | undefined>; body: Buffer }> =>
  new Promise((resolve, reject) => {
    const req = request(url, { method: init.method ?? "GET", headers: init.headers ?? {}, ca }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }))
      res.on("error", reject)
    })
    req.on("error", reject)
    if (init.body !== undefined) req.write(init.body)
    req.end()
  })
