; BA302 script-file-exec (Rust): writes of a value into a file.

; std::fs::write(path, code) / fs::write / tokio::fs::write
(call_expression
  function: [
    (scoped_identifier name: (identifier) @_f)
    (identifier) @_f
  ]
  arguments: (arguments . (_) @sink.file . (_) @arg)
  (#eq? @_f "write")) @span

; file.write_all(code) on a File handle
(call_expression
  function: (field_expression
    value: (_) @sink.handle
    field: (field_identifier) @_m)
  arguments: (arguments . (_) @arg)
  (#any-of? @_m "write_all" "write")) @span
