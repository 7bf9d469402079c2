; BA201 shell-stdin-write (JavaScript/TypeScript): text written into a child's stdin.

; child.stdin.write(x) / child.stdin.end(x)
(call_expression
  function: (member_expression
    object: (member_expression
      property: (property_identifier) @_stdin) @sink.stdin
    property: (property_identifier) @_m)
  arguments: (arguments . (_) @arg)
  (#eq? @_stdin "stdin")
  (#any-of? @_m "write" "end")) @span

; execSync(cmd, {input: x}), spawnSync("bash", [], {input: x})
((call_expression
  function: [
    (identifier) @_fn
    (member_expression property: (property_identifier) @_fn)
  ]
  arguments: (arguments
    (object
      (pair
        key: (property_identifier) @_k
        value: (_) @arg)))) @span @sink.stdin-oneshot
  (#any-of? @_fn "execSync" "spawnSync" "execFileSync")
  (#eq? @_k "input"))
