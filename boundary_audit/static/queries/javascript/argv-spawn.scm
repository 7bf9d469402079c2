; BA301 argv-spawn (JavaScript/TypeScript): process APIs that take a program and an argv.
(call_expression
  function: [
    (identifier) @_fn
    (member_expression property: (property_identifier) @_fn)
  ] @sink.process
  arguments: (arguments) @arg
  (#any-of? @_fn "spawn" "spawnSync" "execFile" "execFileSync" "fork" "execa" "execaSync"
                 "execaCommand" "execaCommandSync" "execaNode")) @span
