; BA301 argv-spawn (Rust): std/tokio Command builders where the process starts
; (`.spawn()`, `.output()`, `.status()`); the builder chain gives the argv.
(call_expression
  function: (field_expression
    field: (field_identifier) @_m) @sink.process
  (#any-of? @_m "spawn" "output" "status")) @span
