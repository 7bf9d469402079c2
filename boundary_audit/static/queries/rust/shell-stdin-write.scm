; BA201 shell-stdin-write (Rust): `stdin.write_all(x)` on a child's stdin handle.
(call_expression
  function: (field_expression
    value: (_) @sink.stdin-handle
    field: (field_identifier) @_m)
  arguments: (arguments . (_) @arg)
  (#any-of? @_m "write_all" "write")) @span
