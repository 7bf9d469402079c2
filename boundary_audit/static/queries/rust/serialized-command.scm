; BA501 serialized-command (Rust): literals that open a JSON object with a quoted key.
((string_literal) @span
  (#match? @span "^\"\\s*(\\{\\{|\\{|\\[)\\s*\\\\\"[A-Za-z_][A-Za-z0-9_]*\\\\\"\\s*:"))
