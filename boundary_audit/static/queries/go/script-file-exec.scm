; BA302 script-file-exec (Go): writes of a value into a file.

; os.WriteFile(path, []byte(code), 0o755)
(call_expression
  function: (selector_expression
    operand: (identifier) @_pkg
    field: (field_identifier) @_f)
  arguments: (argument_list . (_) @sink.file . (_) @arg)
  (#any-of? @_pkg "os" "ioutil")
  (#eq? @_f "WriteFile")) @span

; f.WriteString(code) / f.Write([]byte(code)) on an os.Create handle
(call_expression
  function: (selector_expression
    operand: (_) @sink.handle
    field: (field_identifier) @_f)
  arguments: (argument_list . (_) @arg)
  (#any-of? @_f "Write" "WriteString")) @span
