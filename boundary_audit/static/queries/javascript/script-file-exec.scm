; BA302 script-file-exec (JavaScript/TypeScript): writes of a value into a file.

; fs.writeFileSync(path, code), fs.promises.writeFile(path, code), Deno.writeTextFile(path, code)
(call_expression
  function: [
    (identifier) @_fn
    (member_expression property: (property_identifier) @_fn)
  ]
  arguments: (arguments . (_) @sink.file . (_) @arg)
  (#any-of? @_fn "writeFileSync" "writeFile" "writeTextFile" "appendFileSync" "appendFile"
                 "outputFile" "outputFileSync")) @span

; stream.write(code) on a file stream
(call_expression
  function: (member_expression
    object: (_) @sink.handle
    property: (property_identifier) @_m)
  arguments: (arguments . (_) @arg)
  (#eq? @_m "write")) @span
