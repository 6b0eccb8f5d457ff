"""Reason codes of the firewall proxy."""

from __future__ import annotations

from domestique.reason_codes import ReasonCode

REASON_CODES: tuple[ReasonCode, ...] = (
    ReasonCode(
        "proxy.unknown_route",
        "A method, route or upgrade the firewall does not scan; refused, never forwarded.",
    ),
    ReasonCode(
        "proxy.unsupported_encoding",
        "A Content-Encoding the firewall cannot decode; the body cannot be scanned.",
    ),
    ReasonCode(
        "proxy.malformed_body",
        "The request body is not a well-formed JSON object, or a body was sent on a route "
        "that takes none (model listing).",
    ),
    ReasonCode(
        "proxy.truncated_body",
        "The request body ended early (cut JSON, cut compressed stream, client gone).",
    ),
    ReasonCode("proxy.nesting_too_deep", "The request body nests deeper than the firewall scans."),
    ReasonCode("proxy.body_too_large", "The request body is larger than the firewall's limit."),
    ReasonCode(
        "proxy.decompression_limit",
        "The decompressed body would exceed the limit (a decompression bomb or a huge body).",
    ),
    ReasonCode(
        "proxy.secret_in_signed_part",
        "A finding inside a provider signature or ciphertext (a thinking block's signature,"
        " encrypted_content, thoughtSignature) at its defined position: it cannot be redacted,"
        " and ciphertext that matches a detector is not ciphertext.",
    ),
    ReasonCode(
        "proxy.secret_in_model_output",
        "A finding inside the model's own signed output replayed as the provider requires"
        " (thinking, reasoning, Gemini thought parts): passed unmodified and recorded by default,"
        " since the provider wrote it and changing it breaks the session.",
    ),
    ReasonCode(
        "proxy.credential_by_design",
        "A credential sent to the provider by design (the MCP connector's authorization_token,"
        " an MCP tool's authorization): passed and recorded by default; a policy can block it.",
    ),
    ReasonCode(
        "proxy.unredactable_part",
        "Findings in both a string and the base64 payload it encodes: neither can be"
        " rewritten without undoing the other, so the request is blocked.",
    ),
    ReasonCode(
        "proxy.secret_in_path",
        "A finding in the request path (a Gemini model name) or query string (Gemini's key="
        " aside) that cannot be redacted.",
    ),
    ReasonCode(
        "proxy.secret_in_header",
        "A finding in a forwarded request header other than the provider credential"
        " (x-api-key, authorization, x-goog-api-key, api-key): headers are not redacted.",
    ),
    ReasonCode(
        "proxy.secret_in_document",
        "A finding in the text of a PDF the request carries (Anthropic document, OpenAI"
        " input_file / file, Gemini inline_data): a PDF cannot be redacted in place, so the"
        " request is blocked.",
    ),
    ReasonCode(
        "proxy.document_unreadable",
        "A PDF the firewall cannot read (damaged, or encrypted with a password): its text"
        " cannot be scanned, and the provider's reader may still read it; blocked by default.",
    ),
    ReasonCode(
        "proxy.document_limit",
        "A PDF over the firewall's limits (pages, text, decoding work, time): a PDF bomb or a"
        " huge file; blocked.",
    ),
    ReasonCode(
        "proxy.binary_unscanned",
        "A binary part (image, audio, archive) went unscanned: its content is not text.",
    ),
    ReasonCode(
        "proxy.upstream_error",
        "The configured upstream could not be reached or failed mid-answer; recorded as a "
        "block that follows the decision to forward.",
    ),
    ReasonCode(
        "proxy.vault_unavailable",
        "The local placeholder vault for previous_response_id could not be read.",
    ),
)
