/**
 * @module ErrorPage
 *
 * The pages for an answer that is not the one asked for: 400, 403, 404, 405, 413, 500, 503.
 * They say what happened in words for a person and never show a stack trace or an internal
 * message.
 */
import { type Chrome, Layout } from "./Layout.js"

/** The status codes an error page exists for. */
export type ErrorStatus = 400 | 403 | 404 | 405 | 413 | 500 | 503

const TEXT: Readonly<Record<ErrorStatus, { readonly title: string; readonly text: string }>> = {
  400: { title: "Bad request", text: "The request could not be understood." },
  403: {
    title: "Not allowed",
    text: "This form could not be accepted: it did not come from this page, or it has expired. Go back, reload the page and try again."
  },
  404: { title: "Page not found", text: "There is no page at this address." },
  405: { title: "Method not allowed", text: "This page cannot be used that way." },
  413: { title: "Too large", text: "What was sent is too large." },
  500: { title: "Something went wrong", text: "The page could not be shown. Try again in a moment." },
  503: { title: "Temporarily unavailable", text: "The portal cannot answer right now. Try again in a moment." }
}

export const ErrorPage = (props: {
  readonly chrome: Chrome
  readonly status: ErrorStatus
  /** A more precise sentence than the status's own (e.g. why a form was refused). */
  readonly detail?: string | undefined
}) => {
  const { title, text } = TEXT[props.status]
  return (
    <Layout chrome={props.chrome} title={title} narrow>
      <p>{props.detail ?? text}</p>
      <p>
        <a href={`${props.chrome.basePath}/`}>Go to the portal's start page</a>
      </p>
    </Layout>
  )
}
