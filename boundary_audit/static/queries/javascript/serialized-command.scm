; BA501 serialized-command (JavaScript/TypeScript): literals that open a JSON object with a key.
([(string) (template_string)] @span
  (#match? @span "^[\"'`]\\s*[\\[{]\\s*(\\\\?\")[A-Za-z_][A-Za-z0-9_]*(\\\\?\")\\s*:"))
