; BA101 shell-string-sink (JavaScript/TypeScript): strings handed to a local shell.

; exec(cmd), execSync(cmd), cp.exec(cmd), and promisified aliases (execAsync, pExec...)
(call_expression
  function: [
    (identifier) @_fn
    (member_expression property: (property_identifier) @_fn)
  ] @sink.process
  (#match? @_fn "^(exec|execSync|exec[A-Z][A-Za-z]*|[a-z]+Exec[A-Za-z]*)$")) @span

; zx: $`command ${x}` runs through bash
(call_expression
  function: (identifier) @_fn @sink.process
  arguments: (template_string)
  (#eq? @_fn "$")) @span

; an argv literal whose head is a shell with -c: ["bash", "-c", cmd]
((array
   .
   (string) @_sh
   .
   (string) @_flag
   .
   (_) @arg) @span @sink.argv
  (#match? @_sh "^[\"'](/usr)?(/local)?(/bin/)?(ba|z|da|k|a)?sh[\"']$")
  (#match? @_flag "^[\"']-[a-zA-Z]*c[a-zA-Z]*[\"']$"))
