/** Helpers of the provisioning e2e tests: form posts and reading the verification e-mail. */
import type { ParsedMail } from "mailparser"

export interface Answer {
  readonly status: number
  readonly headers: Headers
  readonly body: { data: any; error: { message: string; exception: null } | null }
  readonly raw: string
}

/** `POST /api/v1/accountsetup/?action=` with urlencoded fields (and extra headers, e.g. `x-forwarded-for`). */
export const action = async (
  url: string,
  name: string,
  fields: Record<string, string> = {},
  headers: Record<string, string> = {}
): Promise<Answer> => {
  const response = await fetch(`${url}/api/v1/accountsetup/?action=${encodeURIComponent(name)}`, {
    method: "POST",
    headers: { ...headers, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(fields).toString()
  })
  const raw = await response.text()
  return { status: response.status, headers: response.headers, body: JSON.parse(raw), raw }
}

/** The code and link a verification e-mail carries, read as a user would. */
export const codeAndLink = (mail: ParsedMail) => {
  const code = /\b(\d{6})\b/.exec(mail.text ?? "")?.[1]
  const link = /(https?:\/\/\S+\/api\/v1\/accountsetup\/verify\/\?token=[A-Za-z0-9_-]+)/.exec(mail.text ?? "")?.[1]
  if (code === undefined || link === undefined) throw new Error("mail without code or link")
  return { code, link }
}

/** The recipient of a parsed e-mail. */
export const recipient = (mail: ParsedMail): string =>
  mail.to !== undefined && !Array.isArray(mail.to) ? mail.to.text.toLowerCase() : ""

/** Follows the e-mail's link as a browser would: GET the page, then POST its form. */
export const confirmLink = async (link: string) => {
  const page = await fetch(link)
  const html = await page.text()
  const token = /name="token" value="([^"]+)"/.exec(html)?.[1]
  if (page.status !== 200 || token === undefined) return page.status
  const posted = await fetch(link, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ token }).toString()
  })
  return posted.status
}

export const STEP1 = {
  first_name: "Ada",
  last_name: "Lopez",
  customer_name: "Acme Logistics LLC",
  local_addr1: "233 S Wacker Dr",
  local_city: "Chicago",
  local_state: "IL",
  local_zip_postal: "60606",
  local_phone: "312-555-0100"
}

export const PASSWORD = "correct horse battery staple 42"
