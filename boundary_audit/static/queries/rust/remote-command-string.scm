; BA401 remote-command-string (Rust): commands run by a remote shell.

; ssh2: channel.exec(cmd); openssh: session.shell(cmd) / raw_command(cmd)
(call_expression
  function: (field_expression
    value: (_) @_recv
    field: (field_identifier) @_m) @sink.remote
  arguments: (arguments . (_) @arg)
  (#any-of? @_m "exec" "shell" "raw_command")
  (#match? @_recv "(channel|chan|ssh|session|sess)$")) @span

; russh: channel.exec(true, cmd)
(call_expression
  function: (field_expression
    value: (_) @_recv
    field: (field_identifier) @_m) @sink.remote
  arguments: (arguments . (boolean_literal) . (_) @arg)
  (#eq? @_m "exec")
  (#match? @_recv "(channel|chan)$")) @span

; bollard: CreateExecOptions { cmd: Some(vec![...]), .. }
((struct_expression
   name: (_) @_t
   body: (field_initializer_list
     (field_initializer
       field: (field_identifier) @_f
       value: (_) @arg))) @span @sink.remote-argv
  (#match? @_t "ExecOptions$|ExecConfig$")
  (#eq? @_f "cmd"))
