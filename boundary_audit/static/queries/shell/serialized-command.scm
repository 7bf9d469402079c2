; BA501 serialized-command (shell scripts): quoted strings that open a JSON object with a key.
([(string) (raw_string)] @span
  (#match? @span "^[\"']\\s*[\\[{]\\s*(\\\\?\")[A-Za-z_][A-Za-z0-9_]*(\\\\?\")\\s*:"))
