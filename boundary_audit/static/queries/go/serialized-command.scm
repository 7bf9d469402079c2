; BA501 serialized-command (Go): literals that open a JSON object with a quoted key.
([(interpreted_string_literal) (raw_string_literal)] @span
  (#match? @span "^[\"`]\\s*[\\[{]\\s*(\\\\?\")[A-Za-z_][A-Za-z0-9_]*(\\\\?\")\\s*:"))
