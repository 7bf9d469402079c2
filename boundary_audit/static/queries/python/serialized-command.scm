; BA501 serialized-command (Python): literals that open a JSON object with a quoted key.
((string) @span
  (#match? @span "^[rbfuRBFU]*(\"|'|\"\"\"|''')\\s*[\\[{]{1,2}\\s*(\\\\?\")[A-Za-z_][A-Za-z0-9_]*(\\\\?\")\\s*:"))
