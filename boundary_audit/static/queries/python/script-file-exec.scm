; BA302 script-file-exec (Python): writes of a value into a file.

; f.write(code) / Path(p).write_text(code) / p.write_bytes(code)
(call
  function: (attribute
    object: (_) @sink.handle
    attribute: (identifier) @_m)
  arguments: (argument_list . (_) @arg)
  (#any-of? @_m "write" "write_text" "write_bytes" "writelines")) @span
